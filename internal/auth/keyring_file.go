package auth

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Keyring files. A keyring holds secrets, so LoadKeyring refuses a file
// that group or others may access (mode & 0o077 != 0), as ssh does for
// private keys; Ceph does not check. Fix with chmod 600. A caller that
// must accept such a file (a secret mounted by an orchestrator that
// cannot set modes) can read it itself and call ParseKeyring.

// LoadKeyring reads and parses the keyring at path.
func LoadKeyring(path string) (Keyring, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("auth: load keyring: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("auth: load keyring: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %#o; chmod 600 it", ErrInsecureKeyring, path, perm)
	}
	text, err := io.ReadAll(io.LimitReader(f, MaxKeyringSize+1))
	if err != nil {
		return nil, fmt.Errorf("auth: load keyring %s: %w", path, err)
	}
	k, err := ParseKeyring(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// SaveKeyring writes k to path atomically with mode 0600: it writes a
// temporary file in the same directory, syncs it, renames it over path and
// syncs the directory, so a crash leaves the old keyring or the new one.
func SaveKeyring(path string, k Keyring) error {
	text, err := k.Marshal()
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, text); err != nil {
		return fmt.Errorf("auth: save keyring %s: %w", path, err)
	}
	return nil
}

func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*") // mode 0600
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

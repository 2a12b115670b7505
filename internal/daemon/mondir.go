package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
)

// A monitor's data directory holds:
//
//	monmap    the monitor map: fsid on the first line, NAME=ADDR,... on the
//	          second, auth=MODE on the third
//	keyring   the cluster's keys the monitor serves (0600; auth cephx only)
//	store/    the monitor store (Raft log, cluster maps)
const (
	monmapFile  = "monmap"
	monStoreDir = "store"
)

// KeyringFile is the name of the keyring in a monitor's or an OSD's data
// directory.
const KeyringFile = "keyring"

// MonKeyName is the entity whose key every monitor shares and uses to
// authenticate to the others.
var MonKeyName = auth.EntityName{Type: "mon", ID: "*"}

// MonMkfsConfig describes a monitor's data directory for a new cluster.
type MonMkfsConfig struct {
	// ID is the monitor's name in MonHost; Data its directory, which
	// must not hold a monitor yet; MonHost every monitor of the
	// cluster as NAME=HOST:PORT,...; FSID the cluster's id. Required.
	ID, Data, MonHost, FSID string
	// Auth is "cephx" or "none". With cephx, AdminKeyring is the
	// keyring with client.admin's and the monitors' keys, created (mode
	// 0600) if missing; the monitor serves a copy of it.
	Auth         string
	AdminKeyring string
}

// MkfsMon makes a monitor's data directory, as `cuttle mon mkfs`
// describes, and returns the monitor map written to it.
func MkfsMon(cfg MonMkfsConfig) (mon.MonMap, error) {
	if cfg.ID == "" || cfg.Data == "" || cfg.MonHost == "" || cfg.FSID == "" {
		return mon.MonMap{}, errors.New("mon mkfs: the id, the data directory, the monitors and the fsid are required")
	}
	mm, err := mon.ParseMonMap(cfg.FSID, cfg.MonHost)
	if err != nil {
		return mon.MonMap{}, err
	}
	if mm.ID(cfg.ID) == 0 {
		return mon.MonMap{}, fmt.Errorf("mon mkfs: mon.%s is not in the monitor map %s", cfg.ID, mm)
	}
	if _, err := os.Stat(filepath.Join(cfg.Data, monmapFile)); err == nil {
		return mon.MonMap{}, fmt.Errorf("mon mkfs: %s already holds a monitor", cfg.Data)
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return mon.MonMap{}, fmt.Errorf("mon mkfs: %w", err)
	}
	switch cfg.Auth {
	case "none":
	case "cephx":
		if err := mkfsKeys(cfg); err != nil {
			return mon.MonMap{}, err
		}
	default:
		return mon.MonMap{}, fmt.Errorf("mon mkfs: auth %q (want cephx or none)", cfg.Auth)
	}
	st, err := monstore.Open(monstore.Options{FS: vfs.Default, Dir: filepath.Join(cfg.Data, monStoreDir)})
	if err != nil {
		return mon.MonMap{}, fmt.Errorf("mon mkfs: %w", err)
	}
	if err := st.Close(); err != nil {
		return mon.MonMap{}, fmt.Errorf("mon mkfs: %w", err)
	}
	text := fmt.Sprintf("%s\n%s\nauth=%s\n", mm.FSID, mm, cfg.Auth)
	if err := os.WriteFile(filepath.Join(cfg.Data, monmapFile), []byte(text), 0o600); err != nil {
		return mon.MonMap{}, fmt.Errorf("mon mkfs: %w", err)
	}
	return mm, nil
}

// mkfsKeys creates the admin keyring if missing (client.admin with every
// cap, and the monitors' shared key) and copies it into the monitor's
// data directory as the keys it serves.
func mkfsKeys(cfg MonMkfsConfig) error {
	if cfg.AdminKeyring == "" {
		return errors.New("mon mkfs: auth cephx needs an admin keyring")
	}
	kr, err := auth.LoadKeyring(cfg.AdminKeyring)
	if errors.Is(err, os.ErrNotExist) {
		kr = auth.Keyring{
			{Type: "client", ID: "admin"}: {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *", "osd": "allow *", "mds": "allow *", "mgr": "allow *"}},
			MonKeyName:                    {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *"}},
		}
		err = auth.SaveKeyring(cfg.AdminKeyring, kr)
	}
	if err != nil {
		return fmt.Errorf("mon mkfs: admin keyring: %w", err)
	}
	if _, ok := kr[MonKeyName]; !ok {
		return fmt.Errorf("mon mkfs: %s has no %s key", cfg.AdminKeyring, MonKeyName)
	}
	return auth.SaveKeyring(filepath.Join(cfg.Data, KeyringFile), kr)
}

// ReadMonDir reads a data directory's monitor map and auth mode.
func ReadMonDir(data string) (mon.MonMap, string, error) {
	b, err := os.ReadFile(filepath.Join(data, monmapFile))
	if err != nil {
		return mon.MonMap{}, "", fmt.Errorf("%s is not a monitor's data directory (run cuttle mon mkfs): %w", data, err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 {
		return mon.MonMap{}, "", fmt.Errorf("%s: malformed", filepath.Join(data, monmapFile))
	}
	mm, err := mon.ParseMonMap(strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1]))
	if err != nil {
		return mon.MonMap{}, "", err
	}
	mode := "none"
	if len(lines) > 2 {
		mode = strings.TrimPrefix(strings.TrimSpace(lines[2]), "auth=")
	}
	return mm, mode, nil
}

package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
	"github.com/cuttlestore/cuttle/internal/osd"
)

// An OSD's data directory holds:
//
//	whoami    the OSD's id, one line
//	keyring   osd.N's key (0600; auth cephx only)
//	block     the object store's data file (sparse: it takes disk space as data is written)
//	db/       the object store's metadata (Pebble)
//	ready     written last by MkfsOSD: the directory is complete
//
// The store is a blockstore in the directory itself, so `cuttle
// objectstore fsck --path DIR` checks a stopped OSD's store.
const (
	osdWhoamiFile = "whoami"
	osdReadyFile  = "ready"
	// OSDBlockFile is the name of the store's data file in an OSD's
	// data directory.
	OSDBlockFile = "block"
)

// OSD caps: what an OSD may do at the monitors (boot, report failures,
// fetch its rotating keys) and with its peers (everything). Its key is
// made with these.
const (
	OSDMonCaps = "profile osd"
	OSDOSDCaps = "allow *"
)

// OSDAllocUnit is the allocation unit of an OSD's store: 4 KiB, as
// Ceph's BlueStore's min_alloc_size, so that small objects (RADOS holds
// many) do not take 64 KiB each.
const OSDAllocUnit = 4 << 10

// MinOSDSize is the smallest store MkfsOSD makes: 256 allocation units.
const MinOSDSize = 256 * OSDAllocUnit

// CheckOSDDir fails unless dir is missing or holds nothing (but a file
// system's lost+found), so that MkfsOSD may make an OSD in it.
func CheckOSDDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != "lost+found" {
			if _, err := os.Stat(filepath.Join(dir, osdWhoamiFile)); err == nil {
				return fmt.Errorf("%s already holds an OSD", dir)
			}
			return fmt.Errorf("%s is not empty", dir)
		}
	}
	return nil
}

// MkfsOSD makes OSD id's store in dir, which CheckOSDDir accepted and
// which holds the OSD's keyring if it uses cephx: a block store of size
// bytes (a multiple of OSDAllocUnit, at least MinOSDSize) over a sparse
// data file, with the OSD's superblock; then the whoami file and, last,
// the ready file.
func MkfsOSD(ctx context.Context, dir string, size uint64, id int32) error {
	if size < MinOSDSize || size%OSDAllocUnit != 0 {
		return fmt.Errorf("store size %d: want a multiple of %d, at least %d", size, OSDAllocUnit, MinOSDSize)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := makeOSDStore(ctx, dir, size, id); err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(dir, osdWhoamiFile), fmt.Appendf(nil, "%d\n", id)); err != nil {
		return err
	}
	return writeFileSync(filepath.Join(dir, osdReadyFile), []byte("ready\n"))
}

// makeOSDStore makes a block store of size bytes in dir over a sparse
// data file, and the OSD superblock for id in it.
func makeOSDStore(ctx context.Context, dir string, size uint64, id int32) (err error) {
	block := filepath.Join(dir, OSDBlockFile)
	f, err := os.OpenFile(block, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(int64(size))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("data file: %w", err)
	}
	if err := blockstore.Mkfs(blockstore.Options{Path: dir, DevicePath: block, Size: size, AllocUnit: OSDAllocUnit}); err != nil {
		return err
	}
	st, err := blockstore.Open(blockstore.Options{Path: dir})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); err == nil {
			err = cerr
		}
	}()
	return osd.Mkfs(ctx, st, id)
}

// writeFileSync writes a small file and syncs it.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadOSDDir reads the id of the OSD in data, which MkfsOSD must have
// completed.
func ReadOSDDir(data string) (int32, error) {
	if _, err := os.Stat(filepath.Join(data, osdReadyFile)); err != nil {
		if _, werr := os.Stat(filepath.Join(data, osdWhoamiFile)); werr == nil || !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("%s: osd mkfs did not complete: %w", data, err)
		}
		return 0, fmt.Errorf("%s is not an OSD's data directory (make one with cuttle osd mkfs): %w", data, err)
	}
	b, err := os.ReadFile(filepath.Join(data, osdWhoamiFile))
	if err != nil {
		return 0, err
	}
	return parseWhoami(string(b))
}

// parseWhoami parses the whoami file: an OSD id on one line.
func parseWhoami(s string) (int32, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("whoami: %q is not an OSD id", strings.TrimSpace(s))
	}
	return int32(id), nil
}

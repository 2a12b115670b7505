package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/spf13/cobra"
)

// An OSD's data directory holds:
//
//	whoami    the OSD's id, one line
//	keyring   osd.N's key (0600; auth cephx only)
//	block     the object store's data file (sparse: it takes disk space as data is written)
//	db/       the object store's metadata (Pebble)
//	ready     written last by osd mkfs: the directory is complete
//
// The store is a blockstore in the directory itself, so `cuttle
// objectstore fsck --path DIR` checks a stopped OSD's store.
const (
	osdWhoamiFile = "whoami"
	osdReadyFile  = "ready"
	osdBlockFile  = "block"
)

// OSD caps: what an OSD may do at the monitors (boot, report failures,
// fetch its rotating keys) and with its peers (everything).
const (
	osdMonCaps = "profile osd"
	osdOSDCaps = "allow *"
)

// defaultOSDSize is the store size osd mkfs makes without --size.
const defaultOSDSize = "10G"

// osdAllocUnit is the allocation unit of an OSD's store: 4 KiB, as
// Ceph's BlueStore's min_alloc_size, so that small objects (RADOS holds
// many) do not take 64 KiB each.
const osdAllocUnit = 4 << 10

// minOSDSize is the smallest store osd mkfs makes: 256 allocation units.
const minOSDSize = 256 * osdAllocUnit

// osdMkfsFlags are the options of osd mkfs.
type osdMkfsFlags struct {
	data string
	size uint64
	// id is the OSD's id, made beforehand with osd create; -1 asks the
	// monitors for a new one.
	id int32
	// uuid names the OSD to "osd create", which gives the same id again
	// for the same uuid, so a retried creation does not take a second
	// id (default: a new random one).
	uuid string
}

// osdMkfsResult is what osd mkfs prints.
type osdMkfsResult struct {
	ID   int32  `json:"osd"`
	Data string `json:"data"`
	Size uint64 `json:"size"`
	Auth string `json:"auth"`
}

func osdMkfsCommand(cf *clusterFlags, out *Output) *cobra.Command {
	var f osdMkfsFlags
	var size string
	id := -1
	c := &cobra.Command{
		Use:   "mkfs --data DIR [--size 10G] [--id N]",
		Short: "Create an OSD: its id and key at the monitors, and its store in DIR",
		Long: `Create an OSD's data directory DIR (missing or empty): ask the monitors for
a new OSD id (osd create) unless --id names one made beforehand, create the
OSD's cephx key (caps mon 'profile osd', osd 'allow *') and write it
to DIR/keyring (mode 0600), and make a block store of --size bytes in DIR:
a sparse data file DIR/block, which takes disk space only as data is written,
and its metadata in DIR/db, with 4 KiB allocation units. Then start the OSD with cuttle osd run --data DIR.

It reaches the monitors as the --name entity (default client.admin), which
needs the caps to create OSDs and keys. Sizes take binary suffixes: 2G, 1.5T.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if f.size, err = parseSize(size); err != nil {
				return fmt.Errorf("osd mkfs: --size: %w", err)
			}
			if id < -1 || id > 1<<24 {
				return fmt.Errorf("osd mkfs: --id %d out of range", id)
			}
			f.id = int32(id)
			ctx, cancel := context.WithTimeout(cmd.Context(), cf.timeout)
			defer cancel()
			res, err := osdMkfs(ctx, cf, f)
			if err != nil {
				return err
			}
			return out.Print(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "created osd.%d in %s: store of %s (sparse), auth %s\n", res.ID, res.Data, formatSize(res.Size), res.Auth)
				return err
			})
		},
	}
	c.Flags().StringVar(&f.data, "data", "", "the OSD's data directory (required; missing or empty)")
	c.Flags().StringVar(&size, "size", defaultOSDSize, "the store's size")
	c.Flags().IntVar(&id, "id", -1, "the OSD's id, already made with cuttle osd create (default: a new one)")
	return c
}

// osdMkfs creates an OSD as osd mkfs describes.
func osdMkfs(ctx context.Context, cf *clusterFlags, f osdMkfsFlags) (osdMkfsResult, error) {
	res := osdMkfsResult{Data: f.data}
	if f.data == "" {
		return res, errors.New("osd mkfs: --data is required")
	}
	if err := checkEmptyDir(f.data); err != nil {
		return res, fmt.Errorf("osd mkfs: %w", err)
	}
	au := uint64(osdAllocUnit)
	res.Size = f.size - f.size%au
	if res.Size < minOSDSize {
		return res, fmt.Errorf("osd mkfs: --size %s is too small (at least %s)", formatSize(f.size), formatSize(minOSDSize))
	}
	mc, err := cf.monClient()
	if err != nil {
		return res, fmt.Errorf("osd mkfs: %w", err)
	}
	defer mc.Close()
	res.ID, err = osdID(ctx, mc, f)
	if err != nil {
		return res, fmt.Errorf("osd mkfs: %w", err)
	}
	if err := os.MkdirAll(f.data, 0o700); err != nil {
		return res, fmt.Errorf("osd mkfs: %w", err)
	}
	res.Auth = confAuthMode(cf.conf, fmt.Sprintf("osd.%d", res.ID))
	if res.Auth == "cephx" {
		if err := osdKey(ctx, mc, res.ID, filepath.Join(f.data, keyringFile)); err != nil {
			return res, fmt.Errorf("osd mkfs: %w", err)
		}
	}
	if err := makeOSDStore(ctx, f.data, res.Size, res.ID); err != nil {
		return res, fmt.Errorf("osd mkfs: %w", err)
	}
	if err := writeFileSync(filepath.Join(f.data, osdWhoamiFile), fmt.Appendf(nil, "%d\n", res.ID)); err != nil {
		return res, fmt.Errorf("osd mkfs: %w", err)
	}
	if err := writeFileSync(filepath.Join(f.data, osdReadyFile), []byte("ready\n")); err != nil {
		return res, fmt.Errorf("osd mkfs: %w", err)
	}
	return res, nil
}

// checkEmptyDir fails unless dir is missing or holds nothing (but a
// file system's lost+found).
func checkEmptyDir(dir string) error {
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

// confAuthMode is the auth option of entity in the configuration file
// (default none, as for every command).
func confAuthMode(path, entity string) string {
	if path == "" {
		return "none"
	}
	conf, err := config.Load(path)
	if err != nil {
		return "none"
	}
	if v, ok := conf.Get(entity, "auth"); ok {
		return v
	}
	return "none"
}

// osdID returns the id to make: f.id, which must exist in the map, or a
// new one from "osd create".
func osdID(ctx context.Context, mc *monc.Client, f osdMkfsFlags) (int32, error) {
	if f.id >= 0 {
		r, err := monRun(ctx, mc, wire.NewCommand("osd dump"))
		if err != nil {
			return 0, err
		}
		var d osdmon.DumpView
		if err := json.Unmarshal(r.Data, &d); err != nil {
			return 0, fmt.Errorf("osd dump: the reply is not JSON: %w", err)
		}
		for _, o := range d.OSDs {
			if o.OSD == f.id {
				return f.id, nil
			}
		}
		return 0, fmt.Errorf("osd.%d does not exist: make it with cuttle osd create, or leave out --id", f.id)
	}
	uuid := f.uuid
	if uuid == "" {
		uuid = newUUID()
	}
	r, err := monRun(ctx, mc, wire.NewCommand("osd create", "uuid", uuid))
	if err != nil {
		return 0, err
	}
	var v struct {
		ID *int32 `json:"osdid"`
	}
	if err := json.Unmarshal(r.Data, &v); err != nil || v.ID == nil {
		return 0, fmt.Errorf("osd create: the reply holds no id: %q", r.Data)
	}
	return *v.ID, nil
}

// osdKey creates osd.id's key with the OSD caps (or fetches it, if it
// exists with them) and writes it to path.
func osdKey(ctx context.Context, mc *monc.Client, id int32, path string) error {
	name := auth.EntityName{Type: "osd", ID: strconv.Itoa(int(id))}
	r, err := monRun(ctx, mc, wire.NewCommand("auth get-or-create", "entity", name.String(),
		"caps.mon", osdMonCaps, "caps.osd", osdOSDCaps))
	if err != nil {
		return err
	}
	var v []struct {
		Entity string            `json:"entity"`
		Key    string            `json:"key"`
		Caps   map[string]string `json:"caps"`
	}
	if err := json.Unmarshal(r.Data, &v); err != nil || len(v) != 1 || v[0].Entity != name.String() {
		return fmt.Errorf("auth get-or-create %s: unexpected reply %q", name, r.Data)
	}
	key, err := auth.ParseSecret(v[0].Key)
	if err != nil {
		return fmt.Errorf("auth get-or-create %s: %w", name, err)
	}
	return auth.SaveKeyring(path, auth.Keyring{name: {Key: key, Caps: auth.Caps(v[0].Caps)}})
}

// monRun runs a command and turns a refusal into an error.
func monRun(ctx context.Context, mc *monc.Client, cmd wire.Command) (wire.Reply, error) {
	r, err := mc.Run(ctx, cmd)
	if err != nil {
		return r, err
	}
	if err := r.Err(); err != nil {
		return r, named(cmd.Prefix, err)
	}
	return r, nil
}

// makeOSDStore makes a block store of size bytes in dir over a sparse
// data file, and the OSD superblock for id in it.
func makeOSDStore(ctx context.Context, dir string, size uint64, id int32) (err error) {
	block := filepath.Join(dir, osdBlockFile)
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
	if err := blockstore.Mkfs(blockstore.Options{Path: dir, DevicePath: block, Size: size, AllocUnit: osdAllocUnit}); err != nil {
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

// readOSDDir reads the id of the OSD in data, which osd mkfs must have
// completed.
func readOSDDir(data string) (int32, error) {
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

package daemoncmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/spf13/cobra"
)

// defaultOSDSize is the store size osd mkfs makes without --size.
const defaultOSDSize = "10G"

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

// OSDMkfsCommand is `osd mkfs`: it creates an OSD at the monitors the
// cluster flags cf name and its store, and prints through out.
func OSDMkfsCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
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
			if f.size, err = cmdutil.ParseSize(size); err != nil {
				return fmt.Errorf("osd mkfs: --size: %w", err)
			}
			if id < -1 || id > 1<<24 {
				return fmt.Errorf("osd mkfs: --id %d out of range", id)
			}
			f.id = int32(id)
			ctx, cancel := context.WithTimeout(cmd.Context(), cf.Timeout)
			defer cancel()
			res, err := osdMkfs(ctx, cf, f)
			if err != nil {
				return err
			}
			return out.Print(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "created osd.%d in %s: store of %s (sparse), auth %s\n", res.ID, res.Data, cmdutil.FormatSize(res.Size), res.Auth)
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
func osdMkfs(ctx context.Context, cf *clusterconn.Flags, f osdMkfsFlags) (osdMkfsResult, error) {
	res := osdMkfsResult{Data: f.data}
	if f.data == "" {
		return res, errors.New("osd mkfs: --data is required")
	}
	if err := daemon.CheckOSDDir(f.data); err != nil {
		return res, fmt.Errorf("osd mkfs: %w", err)
	}
	au := uint64(daemon.OSDAllocUnit)
	res.Size = f.size - f.size%au
	if res.Size < daemon.MinOSDSize {
		return res, fmt.Errorf("osd mkfs: --size %s is too small (at least %s)", cmdutil.FormatSize(f.size), cmdutil.FormatSize(daemon.MinOSDSize))
	}
	mc, err := cf.MonClient()
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
	res.Auth = confAuthMode(cf.Conf, fmt.Sprintf("osd.%d", res.ID))
	if res.Auth == "cephx" {
		if err := osdKey(ctx, mc, res.ID, filepath.Join(f.data, daemon.KeyringFile)); err != nil {
			return res, fmt.Errorf("osd mkfs: %w", err)
		}
	}
	if err := daemon.MkfsOSD(ctx, f.data, res.Size, res.ID); err != nil {
		return res, fmt.Errorf("osd mkfs: %w", err)
	}
	return res, nil
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

// osdDump is the part of the monitors' "osd dump" reply (JSON) that the
// CLI reads itself: which OSDs exist, and where each is up. The CLI
// decodes replies as any client would, without the monitor's types.
type osdDump struct {
	Epoch uint32 `json:"epoch"`
	OSDs  []struct {
		OSD  int32  `json:"osd"`
		Up   bool   `json:"up"`
		Addr string `json:"addr"`
	} `json:"osds"`
}

// osdID returns the id to make: f.id, which must exist in the map, or a
// new one from "osd create".
func osdID(ctx context.Context, mc *monc.Client, f osdMkfsFlags) (int32, error) {
	if f.id >= 0 {
		r, err := monRun(ctx, mc, wire.NewCommand("osd dump"))
		if err != nil {
			return 0, err
		}
		var d osdDump
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
		"caps.mon", daemon.OSDMonCaps, "caps.osd", daemon.OSDOSDCaps))
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
		return r, clusterconn.Named(cmd.Prefix, err)
	}
	return r, nil
}

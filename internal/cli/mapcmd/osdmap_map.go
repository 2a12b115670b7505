package mapcmd

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// placementView is what map-pg and map-object print; the JSON field names
// are those of "ceph osd map".
type placementView struct {
	Epoch         uint32    `json:"epoch"`
	Pool          string    `json:"pool"`
	PoolID        int64     `json:"pool_id"`
	Object        string    `json:"objname,omitempty"`
	Namespace     string    `json:"namespace,omitempty"`
	Key           string    `json:"key,omitempty"`
	RawPG         osdmap.PG `json:"raw_pgid"`
	PG            osdmap.PG `json:"pgid"`
	Up            []int32   `json:"up"`
	UpPrimary     int32     `json:"up_primary"`
	Acting        []int32   `json:"acting"`
	ActingPrimary int32     `json:"acting_primary"`
}

func (v placementView) plain(w io.Writer) error {
	where := fmt.Sprintf("osdmap e%d", v.Epoch)
	if v.Object != "" {
		name := v.Object
		if v.Namespace != "" {
			name = v.Namespace + "/" + name
		}
		where += fmt.Sprintf(" pool '%s' (%d) object '%s' ->", v.Pool, v.PoolID, name)
	}
	_, err := fmt.Fprintf(w, "%s pg %s (%s) -> up (%s, p%d) acting (%s, p%d)\n", where, v.RawPG, v.PG,
		osdList(v.Up), v.UpPrimary, osdList(v.Acting), v.ActingPrimary)
	return err
}

func placeOf(m *osdmap.Map, raw osdmap.PG) (placementView, error) {
	var s osdmap.Scratch
	r, err := m.PGToUpActing(raw, &s)
	if err != nil {
		return placementView{}, err
	}
	return placementView{Epoch: uint32(m.Epoch()), Pool: m.Pool(raw.Pool).Name, PoolID: raw.Pool, RawPG: raw, PG: r.PG,
		Up: r.Up, UpPrimary: r.UpPrimary, Acting: r.Acting, ActingPrimary: r.ActingPrimary}, nil
}

// lookupPool finds a pool by name or id.
func lookupPool(m *osdmap.Map, s string) (*osdmap.Pool, error) {
	if p := m.PoolByName(s); p != nil {
		return p, nil
	}
	if id, err := strconv.ParseInt(s, 10, 64); err == nil {
		if p := m.Pool(id); p != nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", osdmap.ErrNoSuchPool, s)
}

func osdmapMapPGCommand(out *cmdutil.Output) *cobra.Command {
	return &cobra.Command{
		Use:   "map-pg FILE PGID",
		Short: "Show a placement group's up and acting sets (PGID as POOL.SEED in hex)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadOSDMap(args[0])
			if err != nil {
				return err
			}
			pg, err := osdmap.ParsePG(args[1])
			if err != nil {
				return err
			}
			v, err := placeOf(m, pg)
			if err != nil {
				return err
			}
			return out.Print(v, v.plain)
		},
	}
}

func osdmapMapObjectCommand(out *cmdutil.Output) *cobra.Command {
	var nspace, key string
	cmd := &cobra.Command{
		Use:   "map-object FILE POOL NAME [--namespace NS] [--key KEY]",
		Short: "Show where an object is stored (like ceph osd map); POOL is a name or an id",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadOSDMap(args[0])
			if err != nil {
				return err
			}
			p, err := lookupPool(m, args[1])
			if err != nil {
				return err
			}
			id := objid.New(p.ID, nspace, key, args[2], objid.NoSnap)
			v, err := placeOf(m, osdmap.PG{Pool: p.ID, Seed: id.Hash})
			if err != nil {
				return err
			}
			v.Object, v.Namespace, v.Key = args[2], nspace, key
			return out.Print(v, v.plain)
		},
	}
	cmd.Flags().StringVar(&nspace, "namespace", "", "the object's namespace")
	cmd.Flags().StringVar(&key, "key", "", "the object's locator key (default: its name)")
	return cmd
}

func osdmapMapPGsCommand(out *cmdutil.Output) *cobra.Command {
	var pool string
	cmd := &cobra.Command{
		Use:   "map-pgs FILE [--pool P]",
		Short: "Map every PG and count PGs per OSD (like osdmaptool --test-map-pgs-dump-all)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadOSDMap(args[0])
			if err != nil {
				return err
			}
			var pools []int64
			if pool != "" {
				p, err := lookupPool(m, pool)
				if err != nil {
					return err
				}
				pools = append(pools, p.ID)
			}
			d, err := m.DumpPGs(pools...)
			if err != nil {
				return err
			}
			return out.Print(d, d.WriteText)
		},
	}
	cmd.Flags().StringVar(&pool, "pool", "", "only this pool (name or id)")
	return cmd
}

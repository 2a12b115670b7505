package mapcmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/osdmap"
)

// osdmapChanges holds the flags of "osdmap set".
type osdmapChanges struct {
	down, up, out, in          []int32
	reweight, affinity         []string
	setFlags, unsetFlags       []string
	output, incOutput, nowFlag string
}

func osdmapSetCommand(out *cmdutil.Output) *cobra.Command {
	var c osdmapChanges
	cmd := &cobra.Command{
		Use:   "set FILE [--down-osd N] [--up-osd N] [--out-osd N] [--in-osd N] [--reweight N=W] [--primary-affinity N=A] [--set-flag F] [--unset-flag F]",
		Short: "Make the next epoch of a map through an incremental and write it back",
		Long: `Make the next epoch of a map: the changes form one incremental, which is
applied to the map and written back to FILE (or to -o). Every option may be
repeated. Weights and affinities are between 0 and 1.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadOSDMap(args[0])
			if err != nil {
				return err
			}
			inc, changes, err := c.incremental(m)
			if err != nil {
				return err
			}
			m2, err := m.Apply(inc)
			if err != nil {
				return err
			}
			path := args[0]
			if c.output != "" {
				path = c.output
			}
			if c.incOutput != "" {
				data, err := inc.MarshalBinary()
				if err != nil {
					return err
				}
				if err := writeFileAtomic(c.incOutput, data); err != nil {
					return err
				}
			}
			if err := saveOSDMap(path, m2); err != nil {
				return err
			}
			s := summarizeOSDMap(m2, path, changes)
			return out.Print(s, s.plain)
		},
	}
	f := cmd.Flags()
	f.Int32SliceVar(&c.down, "down-osd", nil, "mark OSD N down")
	f.Int32SliceVar(&c.up, "up-osd", nil, "mark OSD N up (creating it if needed)")
	f.Int32SliceVar(&c.out, "out-osd", nil, "mark OSD N out (weight 0)")
	f.Int32SliceVar(&c.in, "in-osd", nil, "mark OSD N in (weight 1)")
	f.StringArrayVar(&c.reweight, "reweight", nil, "set OSD N's in/out weight to W, as N=W")
	f.StringArrayVar(&c.affinity, "primary-affinity", nil, "set OSD N's primary affinity to A, as N=A")
	f.StringArrayVar(&c.setFlags, "set-flag", nil, "set a cluster flag (noout, nodown, noup, noin, ...)")
	f.StringArrayVar(&c.unsetFlags, "unset-flag", nil, "clear a cluster flag")
	f.StringVarP(&c.output, "out", "o", "", "write the new map here instead of over FILE")
	f.StringVar(&c.incOutput, "incremental-out", "", "also write the incremental to this file")
	f.StringVar(&c.nowFlag, "now", "", "modification time, RFC 3339 (default: now)")
	_ = f.MarkHidden("now")
	return cmd
}

// incremental turns the flags into one incremental on m, with a line per
// change.
func (c *osdmapChanges) incremental(m *osdmap.Map) (*osdmap.Incremental, []string, error) {
	inc := m.NewIncremental()
	now, err := osdmapNow(c.nowFlag)
	if err != nil {
		return nil, nil, err
	}
	inc.Modified = now
	var changes []string
	flags := m.Flags()
	for _, names := range []struct {
		list []string
		set  bool
	}{{c.setFlags, true}, {c.unsetFlags, false}} {
		for _, name := range names.list {
			f, err := osdmap.ParseFlag(name)
			if err != nil {
				return nil, nil, err
			}
			if names.set {
				flags |= f
				changes = append(changes, "set "+name)
			} else {
				flags &^= f
				changes = append(changes, "unset "+name)
			}
		}
	}
	if flags != m.Flags() {
		inc.NewFlags = &flags
	}
	for _, op := range []struct {
		ids  []int32
		verb string
		fn   func(*osdmap.Map, int32) error
	}{
		{c.down, "down", inc.MarkDown},
		{c.up, "up", func(m *osdmap.Map, id int32) error { return inc.MarkUp(m, id, inc.PendingOSD(m, id).Addr) }},
		{c.out, "out", inc.MarkOut},
		{c.in, "in", inc.MarkIn},
	} {
		for _, id := range op.ids {
			if err := op.fn(m, id); err != nil {
				return nil, nil, err
			}
			changes = append(changes, fmt.Sprintf("marked osd.%d %s", id, op.verb))
		}
	}
	for _, kv := range c.reweight {
		id, w, err := parseOSDFraction("--reweight", kv)
		if err != nil {
			return nil, nil, err
		}
		if err := inc.Reweight(m, id, w); err != nil {
			return nil, nil, err
		}
		changes = append(changes, fmt.Sprintf("reweighted osd.%d to %s", id, formatFloat(fixedWeight(w))))
	}
	for _, kv := range c.affinity {
		id, a, err := parseOSDFraction("--primary-affinity", kv)
		if err != nil {
			return nil, nil, err
		}
		if err := inc.SetPrimaryAffinity(m, id, a); err != nil {
			return nil, nil, err
		}
		changes = append(changes, fmt.Sprintf("set osd.%d primary affinity to %s", id, formatFloat(fixedWeight(a))))
	}
	if len(changes) == 0 {
		return nil, nil, fmt.Errorf("nothing to change: give at least one of --down-osd, --up-osd, --out-osd, --in-osd, --reweight, --primary-affinity, --set-flag, --unset-flag")
	}
	return inc, changes, nil
}

// parseOSDFraction parses "N=F" with 0 <= F <= 1 into an OSD id and a
// 16.16 value, converted as Ceph's "osd reweight" does.
func parseOSDFraction(flag, s string) (int32, uint32, error) {
	ids, fs, ok := strings.Cut(s, "=")
	if !ok {
		return 0, 0, fmt.Errorf("%s %q: want OSD=VALUE", flag, s)
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(ids, "osd."), 10, 32)
	if err != nil || id < 0 {
		return 0, 0, fmt.Errorf("%s %q: bad OSD id", flag, s)
	}
	f, err := strconv.ParseFloat(fs, 32)
	if err != nil || f < 0 || f > 1 {
		return 0, 0, fmt.Errorf("%s %q: value must be between 0 and 1", flag, s)
	}
	return int32(id), uint32(float32(f) * float32(0x10000)), nil
}

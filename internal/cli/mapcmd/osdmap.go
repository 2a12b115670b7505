package mapcmd

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/crush/crushtext"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/osdmap"
)

// This file holds "cuttle osdmap": build, inspect and change OSD maps
// offline, and compute placements, like Ceph's osdmaptool and "ceph osd
// map".

// AddOSDMapCommands adds "cuttle osdmap" under root.
func AddOSDMapCommands(root *cobra.Command, out *cmdutil.Output) {
	cmd := &cobra.Command{
		Use:   "osdmap",
		Short: "Create, inspect and change OSD maps and compute placements (like osdmaptool)",
		Long: `Create, inspect and change OSD maps offline and compute where objects and
placement groups are stored, with the same results as Ceph's osdmaptool.

FILE arguments are maps in Cuttle's binary form, as "cuttle osdmap create"
writes them.`,
	}
	cmd.AddCommand(osdmapCreateCommand(out), osdmapPrintCommand(out), osdmapMapPGCommand(out),
		osdmapMapObjectCommand(out), osdmapMapPGsCommand(out), osdmapSetCommand(out), osdmapBalanceCommand(out))
	root.AddCommand(cmd)
}

// osdmapNow parses the hidden --now flag (RFC 3339), which makes output
// reproducible in tests; empty means the current time.
func osdmapNow(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--now: %w", err)
	}
	return t, nil
}

func loadOSDMap(path string) (*osdmap.Map, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := osdmap.UnmarshalMap(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// saveOSDMap writes m to path through a temporary file and a rename, so a
// failed write leaves the old map in place.
func saveOSDMap(path string, m *osdmap.Map) error {
	data, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data)
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// osdmapCrush reads a CRUSH map in Ceph's text form or Cuttle's binary
// form.
func osdmapCrush(path string) (*crush.Map, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m *crush.Map
	if crush.IsBinary(data) {
		m, err = crush.UnmarshalBinary(data)
	} else {
		m, err = crushtext.Compile(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// osdmapSummary is what create and set print.
type osdmapSummary struct {
	Output  string   `json:"output"`
	Epoch   uint32   `json:"epoch"`
	FSID    string   `json:"fsid"`
	OSDs    int      `json:"osds"`
	Up      int      `json:"up"`
	In      int      `json:"in"`
	Pools   int      `json:"pools"`
	Changes []string `json:"changes,omitempty"`
}

func summarizeOSDMap(m *osdmap.Map, path string, changes []string) osdmapSummary {
	exist, up, in := m.NumOSDs()
	return osdmapSummary{Output: path, Epoch: uint32(m.Epoch()), FSID: m.FSID().String(),
		OSDs: exist, Up: up, In: in, Pools: len(m.Pools()), Changes: changes}
}

func (s osdmapSummary) plain(w io.Writer) error {
	var sb strings.Builder
	for _, c := range s.Changes {
		fmt.Fprintf(&sb, "%s\n", c)
	}
	fmt.Fprintf(&sb, "wrote %s: epoch %d, %d osds (%d up, %d in), %d pools\n", s.Output, s.Epoch, s.OSDs, s.Up, s.In, s.Pools)
	_, err := io.WriteString(w, sb.String())
	return err
}

func osdmapCreateCommand(out *cmdutil.Output) *cobra.Command {
	var (
		numOSDs, hosts, racks, hostsPerRack, size int
		pgNum                                     uint32
		poolName, crushPath, output, fsid, now    string
	)
	cmd := &cobra.Command{
		Use:   "create --num-osds N [--hosts H | --racks R --hosts-per-rack H] [--pg-num P] [--size S] [--pool NAME] -o FILE",
		Short: "Create epoch 1 of an OSD map with every OSD up and in and one replicated pool",
		Long: `Create epoch 1 of an OSD map: N OSDs, all up and in, and one replicated pool
(id 1) mapped with CRUSH rule 0. The CRUSH map is --crush if given, else a
regular hierarchy: H hosts (default: one per OSD), or R racks of H hosts,
with the OSDs spread evenly and replicas separated by host.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" {
				return fmt.Errorf("no output file given (-o FILE)")
			}
			created, err := osdmapNow(now)
			if err != nil {
				return err
			}
			c, err := createCrush(crushPath, numOSDs, hosts, racks, hostsPerRack)
			if err != nil {
				return err
			}
			pool := osdmap.Pool{ID: 1, Name: poolName, Type: osdmap.PoolReplicated, Size: size,
				MinSize: size - size/2, CrushRule: 0, PGNum: pgNum, PGPNum: pgNum, Flags: osdmap.PoolHashPSPool}
			m, err := osdmap.NewSimple(c, numOSDs, pool)
			if err != nil {
				return err
			}
			spec := m.Spec()
			spec.Created, spec.Modified = created, created
			if spec.FSID, err = parseFSID(fsid); err != nil {
				return err
			}
			if m, err = osdmap.New(spec); err != nil {
				return err
			}
			if err := saveOSDMap(output, m); err != nil {
				return err
			}
			s := summarizeOSDMap(m, output, nil)
			return out.Print(s, s.plain)
		},
	}
	f := cmd.Flags()
	f.IntVar(&numOSDs, "num-osds", 0, "number of OSDs (osd.0 to osd.N-1)")
	f.IntVar(&hosts, "hosts", 0, "hosts to spread the OSDs over (default: one OSD per host)")
	f.IntVar(&racks, "racks", 0, "racks (with --hosts-per-rack)")
	f.IntVar(&hostsPerRack, "hosts-per-rack", 0, "hosts in each rack (with --racks)")
	f.Uint32Var(&pgNum, "pg-num", 32, "placement groups of the pool")
	f.IntVar(&size, "size", 3, "replicas of the pool (min_size is size - size/2)")
	f.StringVar(&poolName, "pool", "rbd", "name of the pool")
	f.StringVar(&crushPath, "crush", "", "CRUSH map to use (text or binary) instead of building one")
	f.StringVar(&fsid, "fsid", "", "cluster id as a UUID (default: random)")
	f.StringVarP(&output, "out", "o", "", "file to write the map to")
	f.StringVar(&now, "now", "", "creation time, RFC 3339 (default: now)")
	_ = f.MarkHidden("now")
	cmd.MarkFlagsMutuallyExclusive("hosts", "racks")
	cmd.MarkFlagsMutuallyExclusive("crush", "hosts")
	cmd.MarkFlagsMutuallyExclusive("crush", "racks")
	return cmd
}

// createCrush loads the CRUSH map or builds a regular one for numOSDs.
func createCrush(path string, numOSDs, hosts, racks, hostsPerRack int) (*crush.Map, error) {
	if numOSDs < 1 || numOSDs > osdmap.MaxOSDs {
		return nil, fmt.Errorf("--num-osds must be between 1 and %d", osdmap.MaxOSDs)
	}
	if path != "" {
		return osdmapCrush(path)
	}
	l := crush.Layout{Hosts: hosts}
	switch {
	case racks > 0:
		if hostsPerRack < 1 {
			return nil, fmt.Errorf("--racks needs --hosts-per-rack")
		}
		l.Racks, l.Hosts = racks, hostsPerRack
	case hostsPerRack > 0:
		return nil, fmt.Errorf("--hosts-per-rack needs --racks")
	case hosts == 0:
		l.Hosts = numOSDs
	}
	buckets := max(l.Racks, 1) * l.Hosts
	if l.Hosts < 1 || numOSDs%buckets != 0 {
		return nil, fmt.Errorf("%d osds do not spread evenly over %d hosts", numOSDs, buckets)
	}
	l.OSDsPerHost = numOSDs / buckets
	spec, err := crush.BuildLayout(l)
	if err != nil {
		return nil, err
	}
	return crush.New(spec)
}

// parseFSID parses a UUID, or returns a random one for "".
func parseFSID(s string) (osdmap.FSID, error) {
	var f osdmap.FSID
	if s == "" {
		if _, err := rand.Read(f[:]); err != nil {
			return f, err
		}
		f[6] = f[6]&0x0f | 0x40 // version 4
		f[8] = f[8]&0x3f | 0x80 // RFC 4122 variant
		return f, nil
	}
	hex := strings.ReplaceAll(s, "-", "")
	if len(hex) != 32 {
		return f, fmt.Errorf("--fsid %q is not a UUID", s)
	}
	for i := range f {
		b, err := strconv.ParseUint(hex[2*i:2*i+2], 16, 8)
		if err != nil {
			return f, fmt.Errorf("--fsid %q is not a UUID", s)
		}
		f[i] = byte(b)
	}
	return f, nil
}

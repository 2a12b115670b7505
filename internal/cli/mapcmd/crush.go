package mapcmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/crush/crushtext"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
)

// AddCrushCommands adds "cuttle crush" under root: compile, decompile,
// build, tree and test CRUSH maps offline, like Ceph's crushtool.
func AddCrushCommands(root *cobra.Command, out *cmdutil.Output) {
	cmd := &cobra.Command{
		Use:   "crush",
		Short: "Compile, inspect and test CRUSH maps (compatible with Ceph's crushtool)",
		Long: `Compile, inspect and test CRUSH maps.

MAP arguments accept Ceph's text form (what "crushtool -d" prints) or
Cuttle's binary form (what "cuttle crush compile" writes); the format is
detected from the content.`,
	}
	cmd.AddCommand(crushCompileCommand(out), crushDecompileCommand(out), crushBuildCommand(out),
		crushTreeCommand(out), crushTestCommand(out), crushRuleCommand(out))
	root.AddCommand(cmd)
}

// loadCrushMap reads a map in text or binary form.
func loadCrushMap(path string) (*crush.Map, error) {
	if path == "" {
		return nil, fmt.Errorf("no map given (-i FILE)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if crush.IsBinary(data) {
		m, err := crush.UnmarshalBinary(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return m, nil
	}
	m, err := crushtext.Compile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// writeOutput writes data to path, or to w when path is "" or "-".
func writeOutput(path string, w io.Writer, data []byte) error {
	if path == "" || path == "-" {
		_, err := w.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// mapSummary is the JSON that compile and build print.
type mapSummary struct {
	Output   string `json:"output"`
	Devices  int    `json:"devices"`
	Buckets  int    `json:"buckets"`
	Rules    int    `json:"rules"`
	Tunables string `json:"tunables_profile"`
}

func summarize(m *crush.Map, path string) mapSummary {
	return mapSummary{Output: path, Devices: len(m.Devices()), Buckets: len(m.Buckets()),
		Rules: len(m.Rules()), Tunables: m.Tunables().ProfileName()}
}

func (s mapSummary) plain(w io.Writer) error {
	_, err := fmt.Fprintf(w, "wrote %s: %d devices, %d buckets, %d rules, tunables %s\n",
		s.Output, s.Devices, s.Buckets, s.Rules, s.Tunables)
	return err
}

// writeMap writes an encoded map and reports what it wrote, unless the map
// itself went to standard output.
func writeMap(out *cmdutil.Output, m *crush.Map, path string, data []byte) error {
	if err := writeOutput(path, out.W, data); err != nil {
		return err
	}
	if path == "-" {
		return nil
	}
	s := summarize(m, path)
	return out.Print(s, s.plain)
}

func crushCompileCommand(out *cmdutil.Output) *cobra.Command {
	var in, output string
	cmd := &cobra.Command{
		Use:   "compile -i MAP.txt -o MAP.bin",
		Short: "Compile a text map into Cuttle's binary form",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" {
				return fmt.Errorf("no output file given (-o FILE)")
			}
			m, err := loadCrushMap(in)
			if err != nil {
				return err
			}
			data, err := m.MarshalBinary()
			if err != nil {
				return err
			}
			return writeMap(out, m, output, data)
		},
	}
	cmd.Flags().StringVarP(&in, "in", "i", "", "map to compile (text or binary)")
	cmd.Flags().StringVarP(&output, "out", "o", "", "file to write the binary map to")
	return cmd
}

func crushDecompileCommand(out *cmdutil.Output) *cobra.Command {
	var in, output string
	cmd := &cobra.Command{
		Use:   "decompile -i MAP [-o MAP.txt]",
		Short: "Print a map in Ceph's text form (as crushtool -d does)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := loadCrushMap(in)
			if err != nil {
				return err
			}
			return writeOutput(output, out.W, crushtext.Decompile(m))
		},
	}
	cmd.Flags().StringVarP(&in, "in", "i", "", "map to decompile (text or binary)")
	cmd.Flags().StringVarP(&output, "out", "o", "", "file to write (default: standard output)")
	return cmd
}

func crushBuildCommand(out *cmdutil.Output) *cobra.Command {
	var (
		l       crush.Layout
		class   string
		output  string
		text    bool
		profile string
	)
	cmd := &cobra.Command{
		Use:   "build --hosts H --osds-per-host N [--racks R] -o MAP",
		Short: "Build a map for a regular cluster (root, racks, hosts, OSDs)",
		Long: `Build a map for a regular cluster: a root "default" holding R racks (or the
hosts directly), H hosts per rack and N OSDs per host, every bucket straw2,
with the rules "replicated_rule" (id 0) and "erasure_rule" (id 1) separating
replicas across the failure domain.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" {
				return fmt.Errorf("no output file given (-o FILE)")
			}
			l.DeviceClass = class
			t, err := crush.Profile(profile)
			if err != nil {
				return err
			}
			l.Tunables = &t
			spec, err := crush.BuildLayout(l)
			if err != nil {
				return err
			}
			m, err := crush.New(spec)
			if err != nil {
				return err
			}
			data := crushtext.Decompile(m)
			if !text {
				if data, err = m.MarshalBinary(); err != nil {
					return err
				}
			}
			return writeMap(out, m, output, data)
		},
	}
	f := cmd.Flags()
	f.IntVar(&l.Racks, "racks", 0, "racks under the root (0: hosts directly under the root)")
	f.IntVar(&l.Hosts, "hosts", 3, "hosts per rack, or in all without racks")
	f.IntVar(&l.OSDsPerHost, "osds-per-host", 1, "OSDs per host")
	f.StringVar(&class, "class", "", "device class of every OSD (e.g. hdd, ssd)")
	f.StringVar(&l.FailureDomain, "failure-domain", "host", "bucket type the default rules separate replicas by")
	f.StringVar(&profile, "tunables", "default", "tunables profile: "+strings.Join(crush.ProfileNames(), ", "))
	f.StringVarP(&output, "out", "o", "", "file to write the map to")
	f.BoolVar(&text, "text", false, "write Ceph's text form instead of the binary form")
	return cmd
}

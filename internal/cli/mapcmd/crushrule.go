package mapcmd

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/crush/crushtext"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
)

// crushRuleCommand is "cuttle crush rule": rules added to a map file
// offline (the cluster's map changes through "cuttle osd crush rule").
func crushRuleCommand(out *cmdutil.Output) *cobra.Command {
	cmd := &cobra.Command{Use: "rule", Short: "Add rules to a map file (the cluster's: cuttle osd crush rule)"}
	cmd.AddCommand(crushRuleCreateHybridCommand(out))
	return cmd
}

// crushRuleCreateHybridCommand adds crush.HybridRule to a map file.
func crushRuleCreateHybridCommand(out *cmdutil.Output) *cobra.Command {
	var in, output, primary, replica, domain, root string
	cmd := &cobra.Command{
		Use:   "create-hybrid NAME -i MAP -o OUT --primary-class ssd --replica-class hdd [--failure-domain host] [--root default]",
		Short: "Add a rule whose first copy (the primary) is on one device class and the others on another (SSD primaries)",
		Long: `Add Ceph's SSD-primary rule to a map, with the lowest free rule id, and write
the map in Ceph's text form (crushtool -c compiles it): take ROOT class
PRIMARY; chooseleaf firstn 1 type DOMAIN; emit; take ROOT class REPLICA;
chooseleaf firstn -1 type DOMAIN; emit. Then "cuttle crush test --rule ID
--check-primary-class PRIMARY --check-failure-domain DOMAIN" reports where
the copies land; the two takes are independent, so a replica may share the
primary's failure domain (docs/CRUSH.md, "Hybrid rules").`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if primary == "" || replica == "" || output == "" {
				return fmt.Errorf("crush rule create-hybrid: -o, --primary-class and --replica-class are required")
			}
			m, err := loadCrushMap(in)
			if err != nil {
				return err
			}
			if m.RuleByName(args[0]) != nil {
				return fmt.Errorf("crush rule create-hybrid: the map has a rule %s already", args[0])
			}
			rootID, ok := m.ItemID(root)
			if !ok || rootID >= 0 {
				return fmt.Errorf("crush rule create-hybrid: no bucket %s in the map (--root)", root)
			}
			typ, ok := m.TypeID(domain)
			if !ok {
				return fmt.Errorf("crush rule create-hybrid: no bucket type %s in the map (--failure-domain)", domain)
			}
			for _, c := range []string{primary, replica} {
				if !slices.Contains(m.Classes(), c) {
					return fmt.Errorf("crush rule create-hybrid: no device of class %s in the map", c)
				}
			}
			spec := m.Spec()
			id := int32(0)
			for m.Rule(id) != nil {
				id++
			}
			spec.Rules = append(spec.Rules, crush.HybridRule(id, args[0], rootID, primary, replica, typ))
			next, err := crush.New(spec)
			if err != nil {
				return fmt.Errorf("crush rule create-hybrid: %w", err)
			}
			if err := writeOutput(output, out.W, crushtext.Decompile(next)); err != nil {
				return err
			}
			if output == "-" {
				return nil
			}
			res := struct {
				Output string `json:"output"`
				Rule   int32  `json:"rule_id"`
				Name   string `json:"rule_name"`
			}{output, id, args[0]}
			return out.Print(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "wrote %s: rule %s (id %d), primary from class %s, replicas from class %s, across %s\n",
					output, args[0], id, primary, replica, domain)
				return err
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&in, "in", "i", "", "map to add the rule to (text or binary)")
	fl.StringVarP(&output, "out", "o", "", "file to write the map to, in text form (- for standard output)")
	fl.StringVar(&primary, "primary-class", "", "device class of the first copy (the primary), e.g. ssd")
	fl.StringVar(&replica, "replica-class", "", "device class of the other copies, e.g. hdd")
	fl.StringVar(&domain, "failure-domain", "host", "bucket type the copies are spread across (within each class)")
	fl.StringVar(&root, "root", "default", "bucket to take from")
	return cmd
}

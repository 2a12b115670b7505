package admincmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/spf13/cobra"
)

// AddBalancerCommands adds "cuttle balancer": the monitors' upmap
// balancer (MONITOR-COMMANDS.md, "Balancer"; BALANCER.md).
func AddBalancerCommands(root *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags) {
	mc := func(use, short, prefix string, args []string) *cobra.Command {
		return clusterconn.MonCommand(cf, out, use, short, prefix, args)
	}
	b := &cobra.Command{Use: "balancer", Short: "Even out the PG copies per OSD with pg_upmap_items (Ceph's upmap balancer)"}
	b.AddCommand(
		mc("status", "Show whether the balancer is on, its mode, the stored plans and the map's score", "balancer status", nil),
		mc("eval [POOL...]", "Score the spread of PG copies per OSD (lower is better), per pool with min, max and stddev", "balancer eval", []string{"?pools..."}),
		evalPlanCommand(cf, out),
		mc("optimize PLAN [POOL...]", "Compute a plan of bounded moves on the current map and store it as PLAN", "balancer optimize", []string{"plan", "?pools..."}),
		mc("show PLAN", "Show a plan's moves and the upmap commands it amounts to", "balancer show", []string{"plan"}),
		executeCommand(cf, out),
		mc("rm PLAN", "Remove a stored plan", "balancer rm", []string{"plan"}),
		mc("on", "Run balancing rounds automatically (every balancer_sleep_interval)", "balancer on", nil),
		mc("off", "Stop the automatic rounds", "balancer off", nil),
		mc("mode MODE", "Set the mode: upmap or none", "balancer mode", []string{"mode"}),
	)
	root.AddCommand(b)
}

// evalPlanCommand is "balancer eval-plan PLAN [POOL...]": the score the
// map would have after the plan.
func evalPlanCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	return &cobra.Command{
		Use:   "eval-plan PLAN [POOL...]",
		Short: "Score the spread a stored plan would make",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := wire.NewCommand("balancer eval", "plan", args[0])
			if len(args) > 1 {
				c.Args["pools"] = strings.Join(args[1:], " ")
			}
			return clusterconn.RunMon(cmd.Context(), cf, out, c)
		},
	}
}

// executeCommand is "balancer execute PLAN": it reads the plan's command
// from the monitors, sends it (the OSD map applies it in one epoch, or
// refuses it if the map moved on since the plan was made), and removes
// the plan, as Ceph's balancer module executes a plan through monitor
// commands.
func executeCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	return &cobra.Command{
		Use:   "execute PLAN",
		Short: "Apply a stored plan to the OSD map and remove it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := cf.MonClient()
			if err != nil {
				return err
			}
			defer mc.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), cf.Timeout)
			defer cancel()
			run := func(c wire.Command) (wire.Reply, error) {
				r, err := mc.Run(ctx, c)
				if err == nil {
					err = r.Err()
				}
				return r, err
			}
			shown, err := run(wire.NewCommand("balancer show", "plan", args[0]))
			if err != nil {
				return err
			}
			var plan struct {
				Command struct {
					Prefix string            `json:"prefix"`
					Args   map[string]string `json:"args"`
				} `json:"command"`
			}
			if err := json.Unmarshal(shown.Data, &plan); err != nil || plan.Command.Prefix == "" {
				return fmt.Errorf("balancer execute %s: the monitors' plan has no command (%v)", args[0], err)
			}
			done, err := run(wire.Command{Prefix: plan.Command.Prefix, Args: plan.Command.Args})
			if err != nil {
				return fmt.Errorf("balancer execute %s: %w", args[0], err)
			}
			if _, err := run(wire.NewCommand("balancer rm", "plan", args[0])); err != nil {
				return fmt.Errorf("balancer execute %s: applied, but removing the plan: %w", args[0], err)
			}
			return out.Print(map[string]string{"status": done.Status, "plan": args[0]}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "executed plan %s: %s\n", args[0], done.Status)
				return err
			})
		},
	}
}

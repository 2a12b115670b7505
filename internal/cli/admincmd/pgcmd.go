package admincmd

import (
	"context"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/spf13/cobra"
)

// AddPGCommands adds "cuttle pg": the placement groups as the monitors
// know them from their primaries' reports (MONITOR-COMMANDS.md lists each
// command's output), and "cuttle df", the space those reports add up to.
// Commands that act on a PG (scrub, repair) belong here too.
func AddPGCommands(root *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags) {
	mc := func(use, short, prefix string, args []string) *cobra.Command {
		return clusterconn.MonCommand(cf, out, use, short, prefix, args)
	}
	pg := &cobra.Command{Use: "pg", Short: "Show placement groups: their states, objects and usage, and where they are"}
	pg.AddCommand(
		mc("stat", "Summarize the PGs: counts by state, objects, usage, degraded and misplaced objects", "pg stat", nil),
		mc("dump", "Show every PG, and every OSD's usage", "pg dump", nil),
		mc("query PGID", "Show one PG (PGID as POOL.SEED, e.g. 1.1f)", "pg query", []string{"pgid"}),
		mc("ls [STATE...]", "List the PGs, or those whose state has every STATE given (active, clean, degraded, stale, ...)", "pg ls", []string{"?states..."}),
		mc("ls-by-osd OSD", "List the PGs whose acting set holds an OSD (3 or osd.3)", "pg ls-by-osd", []string{"osd"}),
		pgTell(cf, out, "scrub", "Scrub a PG now: compare its copies' sizes, versions and attributes"),
		pgTell(cf, out, "deep-scrub", "Deep-scrub a PG now: also read every byte and compare data and omap digests"),
		pgTell(cf, out, "repair", "Deep-scrub a PG and rewrite every copy that differs from the authoritative one"),
		markUnfoundLostCommand(cf, out),
	)
	root.AddCommand(pg,
		mc("df", "Show the cluster's raw space and each pool's data, use and room left (MAX AVAIL)", "df", nil))
}

// pgTell is a command the PG's primary OSD carries out ("pg scrub"): the
// CLI finds the primary in its map and sends it there, as Ceph's monitors
// forward these to the primary. The primary queues the work and answers
// at once; pg query shows its outcome (last scrub stamps, inconsistent
// objects).
func pgTell(cf *clusterconn.Flags, out *cmdutil.Output, verb, short string) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " PGID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return sendPGCommand(cmd, cf, out, args[0], "pg "+verb)
		},
	}
}

// sendPGCommand sends prefix (with arguments kv) about pgid to the PG's
// acting primary and prints its answer.
func sendPGCommand(cmd *cobra.Command, cf *clusterconn.Flags, out *cmdutil.Output, pgid, prefix string, kv ...string) error {
	return sendDaemonCommand(cmd, cf, out, func(ctx context.Context, c *rados.Conn) (rados.MonReply, error) {
		return c.PGCommand(ctx, pgid, prefix, kv...)
	})
}

// markUnfoundLostCommand is "cuttle pg mark_unfound_lost PGID
// revert|delete": the primary of a PG stuck on objects no OSD holds
// rolls them back to older copies, or forgets them.
func markUnfoundLostCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	return &cobra.Command{
		Use:   "mark_unfound_lost PGID revert|delete",
		Short: "Let a PG go active without the objects no reachable OSD holds (reverted to older copies, or deleted)",
		Long: `A PG whose peering cannot find a readable copy of some objects (the OSDs that
held them are gone, or their copies rotted) stays incomplete (or, in an
active PG, active+recovery_unfound) and the monitors raise OBJECT_UNFOUND.
If no OSD that could hold them will return, this tells the PG's primary to
go on without them:

  revert  each object goes back to the newest older copy any OSD holds (a
          member or an OSD outside the PG that kept a copy from before the
          lost write), which every member then gets; an object no OSD holds
          an older copy of is deleted. The writes after that copy are lost.
  delete  the PG's log records their removal and every member deletes its
          copy. Their data is lost.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[1] != "delete" && args[1] != "revert" {
				return fmt.Errorf("mode %q: want revert or delete", args[1])
			}
			return sendPGCommand(cmd, cf, out, args[0], "pg mark_unfound_lost", "mode", args[1])
		},
	}
}

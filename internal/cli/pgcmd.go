package cli

import "github.com/spf13/cobra"

// addPGCommands adds "cuttle pg": the placement groups as the monitors
// know them from their primaries' reports (MONITOR-COMMANDS.md lists each
// command's output). Commands that act on a PG (scrub, repair) belong
// here too.
func addPGCommands(root *cobra.Command, out *Output, cf *clusterFlags) {
	mc := func(use, short, prefix string, args []string) *cobra.Command {
		return monCommand(cf, out, use, short, prefix, args)
	}
	pg := &cobra.Command{Use: "pg", Short: "Show placement groups: their states, objects and usage, and where they are"}
	pg.AddCommand(
		mc("stat", "Summarize the PGs: counts by state, objects, usage, degraded and misplaced objects", "pg stat", nil),
		mc("dump", "Show every PG, and every OSD's usage", "pg dump", nil),
		mc("query PGID", "Show one PG (PGID as POOL.SEED, e.g. 1.1f)", "pg query", []string{"pgid"}),
		mc("ls [STATE...]", "List the PGs, or those whose state has every STATE given (active, clean, degraded, stale, ...)", "pg ls", []string{"?states..."}),
		mc("ls-by-osd OSD", "List the PGs whose acting set holds an OSD (3 or osd.3)", "pg ls-by-osd", []string{"osd"}),
	)
	root.AddCommand(pg)
}

package reserve

// Recovery priorities, as Ceph orders them (osd_types.h's
// OSD_RECOVERY_PRIORITY_BASE and OSD_BACKFILL_*): a PG recovering from
// its log, whose members lack a few objects, goes before a backfill, and
// a backfill that makes missing copies (degraded) before one that moves
// copies to where CRUSH wants them (misplaced). Each is raised by how
// many members the PG's acting set lacks, so that the PGs with the
// fewest copies heal first.
const (
	PriorityBackfill         = 100
	PriorityBackfillDegraded = 140
	PriorityRecovery         = 180
	// maxBoost keeps a boosted priority below the next class's.
	maxBoost = 39
)

// Priority is the priority of a PG's recovery: backfill says whether a
// member is backfilled, degraded whether copies are missing (not only
// misplaced), and short how many OSDs the acting set lacks of the pool's
// size.
func Priority(backfill, degraded bool, short int) int {
	base := PriorityRecovery
	switch {
	case backfill && degraded:
		base = PriorityBackfillDegraded
	case backfill:
		base = PriorityBackfill
	}
	return base + min(max(short, 0), maxBoost)
}

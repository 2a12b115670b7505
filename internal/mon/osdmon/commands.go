package osdmon

import (
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// command is one command of the service: a read has query, a write has
// prepare. docs/MONITOR-COMMANDS.md documents each with its arguments.
type command struct {
	query   func(s *Service, c moncmd.Command) moncmd.Reply
	prepare func(s *Service, c moncmd.Command, now time.Time) ([]byte, moncmd.Reply)
}

// commands lists the service's commands by prefix, with their arguments
// (Command.Args names; [optional]).
func commands() map[string]command {
	return map[string]command{
		// Cluster creation: fsid.
		"osdmap create": {prepare: (*Service).prepareCreate},

		// Reads.
		"osd dump":            {query: (*Service).queryDump},   // [epoch]
		"osd tree":            {query: (*Service).queryTree},   //
		"osd stat":            {query: (*Service).queryStat},   //
		"osd ls":              {query: (*Service).queryLs},     //
		"osd getmap":          {query: (*Service).queryGetmap}, // [epoch]
		"osd find":            {query: (*Service).queryFind},   // id
		"osd pool ls":         {query: (*Service).queryPoolLs}, // [detail]
		"osd pool get":        {query: (*Service).queryPoolGet},
		"osd crush rule ls":   {query: (*Service).queryRuleLs},
		"osd crush rule dump": {query: (*Service).queryRuleDump}, // [name]
		"osd pool lssnap":     {query: (*Service).queryLssnap},   // pool

		// OSD lifecycle.
		"osd create":     {prepare: (*Service).prepareOSDCreate},  // [uuid]
		"osd boot":       {prepare: (*Service).prepareBoot},       // id addr host [weight] [uuid] [class] [nonce]
		"osd down":       {prepare: (*Service).prepareDown},       // ids
		"osd out":        {prepare: (*Service).prepareOut},        // ids [auto]
		"osd in":         {prepare: (*Service).prepareIn},         // ids
		"osd rm":         {prepare: (*Service).prepareRm},         // ids
		"osd lost":       {prepare: (*Service).prepareLost},       // id yes_i_really_mean_it
		"osd reweight":   {prepare: (*Service).prepareReweight},   // id weight
		"osd set":        {prepare: (*Service).prepareSetFlag},    // key
		"osd unset":      {prepare: (*Service).prepareUnsetFlag},  // key
		"osd failure":    {prepare: (*Service).prepareFailure},    // target [reporter failed_for immediate up_from alive]
		"osd markmedown": {prepare: (*Service).prepareMarkMeDown}, // id addr
		"osd alive":      {prepare: (*Service).prepareAlive},      // id addr want
		"osd pg-temp":    {prepare: (*Service).preparePGTemp},     // pgid [osds]

		// The blocklist (blocklist.go).
		"osd blocklist add": {prepare: (*Service).prepareBlocklistAdd}, // addr [expire]
		"osd blocklist rm":  {prepare: (*Service).prepareBlocklistRm},  // addr
		"osd blocklist ls":  {query: (*Service).queryBlocklistLs},      //

		// Upmaps (upmap.go).
		"osd pg-upmap-items":    {prepare: (*Service).preparePGUpmapItems},   // pgid mappings
		"osd rm-pg-upmap-items": {prepare: (*Service).prepareRmPGUpmapItems}, // pgid
		"osd pg-upmap-plan":     {prepare: (*Service).prepareUpmapPlan},      // epoch [items] [rm]

		// Fullness (full.go).
		"osd set-full-ratio":         {prepare: (*Service).prepareSetRatio},   // ratio
		"osd set-backfillfull-ratio": {prepare: (*Service).prepareSetRatio},   // ratio
		"osd set-nearfull-ratio":     {prepare: (*Service).prepareSetRatio},   // ratio
		"osd full-states":            {prepare: (*Service).prepareFullStates}, // [full] [backfillfull] [nearfull]
		"osd set-loads":              {prepare: (*Service).prepareSetLoads},   // loads (pgmap publishes the OSDs' loads)

		// Pools.
		"osd pool create": {prepare: (*Service).preparePoolCreate}, // pool [pg_num pgp_num size min_size rule pool_type yes_i_really_mean_it]
		"osd pool set":    {prepare: (*Service).preparePoolSet},    // pool var val [yes_i_really_mean_it]
		"osd pool rename": {prepare: (*Service).preparePoolRename}, // srcpool destpool
		"osd pool rm":     {prepare: (*Service).preparePoolRm},     // pool pool2 yes_i_really_really_mean_it

		// Snapshots (snaps.go).
		"osd pool mksnap":                  {prepare: (*Service).prepareMksnap},            // pool snap
		"osd pool rmsnap":                  {prepare: (*Service).prepareRmsnap},            // pool snap
		"osd pool selfmanaged_snap_create": {prepare: (*Service).prepareSelfManagedCreate}, // pool
		"osd pool selfmanaged_snap_remove": {prepare: (*Service).prepareSelfManagedRemove}, // pool snapid

		// CRUSH.
		"osd crush add-bucket":             {prepare: (*Service).prepareAddBucket},        // name type
		"osd crush move":                   {prepare: (*Service).prepareMove},             // name TYPE=NAME...
		"osd crush reweight":               {prepare: (*Service).prepareCrushReweight},    // name weight
		"osd crush set-device-class":       {prepare: (*Service).prepareSetClass},         // class ids
		"osd crush rm-device-class":        {prepare: (*Service).prepareRmClass},          // ids
		"osd crush rm":                     {prepare: (*Service).prepareCrushRm},          // name
		"osd crush rule create-replicated": {prepare: (*Service).prepareRuleCreate},       // name root type [class]
		"osd crush rule create-hybrid":     {prepare: (*Service).prepareRuleCreateHybrid}, // name primary_class replica_class type [root]
		"osd crush rule rm":                {prepare: (*Service).prepareRuleRm},           // name
	}
}

package archtest

// Layers of LAYOUT.md. A package may import packages of a lower layer only,
// apart from the pairs in sameLayerImports.
const (
	layerLeaves    = 0 // L0: stdlib only
	layerModels    = 1 // L1: models and storage
	layerTransport = 2 // L2: wire and transport
	layerCores     = 3 // L3: mon, osd, rados (which never import each other)
	layerLibraries = 4 // L4: libraries built on rados
	layerFrontEnds = 5 // L5: front ends
	layerEntry     = 6 // cmd/...: wiring only
	layerTestOnly  = 7 // imported only by _test.go files; may import anything
)

// layerNames are used in error messages.
var layerNames = map[int]string{
	layerLeaves:    "L0",
	layerModels:    "L1",
	layerTransport: "L2",
	layerCores:     "L3",
	layerLibraries: "L4",
	layerFrontEnds: "L5",
	layerEntry:     "entry",
	layerTestOnly:  "test-only",
}

// layers maps package patterns, relative to the module path, to layers. A
// pattern "p/..." matches p and every package below it; when several
// patterns match, the longest wins. Every package of the module must match
// one: add new packages here, with the layer LAYOUT.md gives them. The
// table lists the tree as it is, not as planned (TablesCurrent fails on a
// pattern that matches no package): LAYOUT.md holds the plan, and a
// package's entry comes with the package.
var layers = []struct {
	pattern string
	layer   int
}{
	{"objid", layerLeaves},
	{"encoding", layerLeaves},
	{"internal/bufpool", layerLeaves},
	{"internal/clock", layerLeaves},
	{"internal/procs", layerLeaves},
	{"internal/invariants", layerLeaves},
	{"internal/pebblelog", layerLeaves},
	{"internal/crc32c", layerLeaves},
	{"internal/rawio", layerLeaves},
	{"internal/nbd/proto", layerLeaves},

	{"crush", layerModels},
	{"crush/crushtext", layerModels},
	{"osdmap", layerModels},
	{"mdsmap", layerModels},
	{"internal/balancer", layerModels},
	{"internal/autoscale", layerModels},
	{"internal/auth", layerModels},

	{"internal/config", layerModels},
	{"internal/objectstore/...", layerModels},
	{"internal/metrics", layerModels},
	{"internal/loadstat", layerModels},
	{"internal/fsx", layerModels},

	{"internal/wire", layerTransport},
	{"internal/msgr/...", layerTransport},
	{"internal/monc", layerTransport},
	// Object classes: the payloads of call ops and the methods OSDs run
	// on them, below the cores so that OSDs run them and clients encode
	// their inputs without either knowing the other.
	{"internal/cls/...", layerTransport},

	{"internal/mon/...", layerCores},
	{"internal/osd/...", layerCores},
	{"rados", layerCores},

	{"striper/...", layerLibraries},
	{"rbd", layerLibraries},
	{"fsclient/...", layerLibraries},
	{"kv/...", layerLibraries},
	{"internal/mds/...", layerLibraries},

	{"internal/cli/...", layerFrontEnds},
	{"internal/s3gw/...", layerFrontEnds},
	{"internal/daemon", layerFrontEnds},
	{"internal/fusemount", layerFrontEnds},
	{"internal/launcher", layerFrontEnds},
	{"internal/nbd", layerFrontEnds},
	{"internal/bench", layerFrontEnds},

	{"cmd/...", layerEntry},
	{"scripts/...", layerEntry}, // programs the benchmark scripts run (go run ./scripts/...)

	{"internal/sim/...", layerTestOnly},
	{"internal/archtest", layerTestOnly},
	{"internal/crushvectors", layerTestOnly},
	{"internal/objectstore/storetest", layerTestOnly},
	{"internal/cls/clstest", layerTestOnly},
	{"internal/mon/montest", layerTestOnly},
	{"internal/posixtest", layerTestOnly},
	{"internal/blocktest", layerTestOnly},
	{"internal/cli/clitest", layerTestOnly},
}

// sameLayerImports lists the imports allowed between packages of the same
// layer, from LAYOUT.md's "Imports:" lines: importer pattern to imported
// patterns. Sub-packages import their parent only where LAYOUT.md says so;
// otherwise the parent wires its children together.
var sameLayerImports = map[string][]string{
	// L1
	"crush/crushtext":               {"crush"},
	"osdmap":                        {"crush"},
	"internal/balancer":             {"crush", "osdmap"},
	"internal/autoscale":            {"crush", "osdmap"},
	"internal/loadstat":             {"osdmap"},
	"internal/objectstore/memstore": {"internal/objectstore"},
	"internal/objectstore/blockstore": {"internal/objectstore", "internal/objectstore/blockstore/alloc",
		"internal/objectstore/blockstore/dio", "internal/objectstore/blockstore/format"},
	"internal/objectstore/blockstore/format": {"internal/objectstore"},
	"internal/objectstore/devemu":            {"internal/objectstore"},

	// L2
	"internal/msgr/memnet": {"internal/msgr"},
	// The monitor client is shared by daemons and clients: it speaks the
	// monitor messages over its own messenger.
	"internal/monc": {"internal/msgr", "internal/wire"},
	// Classes build on wire's ops and errnos and on objclass's contract;
	// cls wires the standard set from its children.
	"internal/cls":     {"internal/cls/..."},
	"internal/cls/...": {"internal/cls/objclass", "internal/wire"},

	// L3: the mon and osd drivers wire their sub-packages; mon, osd and
	// rados never import each other.
	"internal/mon": {"internal/mon/..."},
	// The services implement moncmd's contract over monstore.
	"internal/mon/moncmd":      {"internal/mon/monstore"},
	"internal/mon/osdmon":      {"internal/mon/moncmd", "internal/mon/monstore", "internal/mon/health"},
	"internal/mon/configmon":   {"internal/mon/moncmd", "internal/mon/monstore"},
	"internal/mon/authmon":     {"internal/mon/moncmd", "internal/mon/monstore"},
	"internal/mon/pgmon":       {"internal/mon/moncmd", "internal/mon/monstore", "internal/mon/health"},
	"internal/mon/balancermon": {"internal/mon/moncmd", "internal/mon/monstore"},
	"internal/mon/mdsmon": {"internal/mon/moncmd", "internal/mon/monstore", "internal/mon/health",
		"internal/mon/mdsmon/failover"},
	"internal/osd":            {"internal/osd/..."},
	"internal/osd/peering":    {"internal/osd/pglog"},
	"internal/osd/split":      {"internal/osd/pglog"},
	"internal/osd/slots":      {"internal/osd/opq"},
	"internal/osd/replread":   {"internal/osd/ops"},
	"internal/osd/superblock": {},
	"internal/osd/txncrc":     {},
	"internal/osd/merge":      {"internal/osd/pglog", "internal/osd/split"},

	// L4: the striper does its I/O with its layout arithmetic.
	"striper": {"striper/layout"},
	// The kv store drives its pure core.
	"kv": {"kv/plan"},
	// The MDS journal is a file striped over the metadata pool.
	"internal/mds/journal": {"striper", "striper/layout"},
	// The autoscaler's service raises health checks, as osdmon and
	// pgmon do.
	"internal/mon/autoscalemon": {"internal/mon/moncmd", "internal/mon/monstore", "internal/mon/health"},
	// Inodes carry their file layout.
	"internal/mds/mdtypes": {"striper/layout"},
	// The namespace's store writes mdtypes' values (and files' default
	// layouts) in RADOS objects.
	"internal/mds/mdstore": {"internal/mds/mdtypes", "striper/layout"},
	// The MDS engine caches the namespace (mdstore, mdtypes), journals
	// its changes, hands out caps through the locker and purges files'
	// data objects (striper).
	"internal/mds/mdcache": {"internal/mds/mdtypes", "internal/mds/mdstore", "internal/mds/journal",
		"internal/mds/locker", "striper", "striper/layout"},
	// The offline scrub reads what mdstore writes (its stamp xattr),
	// the journal's header and files' layouts.
	"internal/mds/scrub": {"internal/mds/mdtypes", "internal/mds/mdstore", "internal/mds/journal", "striper/layout"},
	// Block images stripe their data objects.
	"rbd": {"striper", "striper/layout"},
	// The file-system client reads and writes file data through the
	// striper, uses the locker's cap bits (CanCache, CanBuffer) and
	// drives its pure cores.
	"fsclient": {"striper", "striper/layout", "internal/mds/locker", "fsclient/internal/..."},
	// The client's cap table speaks the locker's cap bits.
	"fsclient/internal/captab": {"internal/mds/locker"},
	// The MDS daemon's server ends sessions in the locker's terms.
	"internal/mds/server": {"internal/mds/locker"},
	// The seam's adapter hands the real engine, and the journal's
	// follower, to the daemon's server.
	"internal/mds/cacheengine": {"internal/mds/mdcache", "internal/mds/server", "internal/mds/locker", "internal/mds/journal",
		"internal/mds/mdtypes"},

	// L5: the CLI's root only assembles the command families of its
	// sub-packages, one noun each (cliRoot); its daemoncmd runs the
	// daemons through their assembly and the local cluster through the
	// launcher.
	"internal/cli": {"internal/cli/..."},
	// The connection to a cluster prints monitors' replies through cmdutil.
	"internal/cli/clusterconn": {"internal/cli/cmdutil"},
	// The monitor commands reach the cluster through clusterconn.
	"internal/cli/admincmd": {"internal/cli/clusterconn", "internal/cli/cmdutil"},
	// The daemons' commands create and run daemons through their assembly
	// (internal/daemon) and a local cluster through the launcher; they
	// reach the monitors through clusterconn. cluster up makes the S3
	// gateway's first user in its records.
	"internal/cli/daemoncmd": {"internal/cli/clusterconn", "internal/cli/cmdutil",
		"internal/daemon", "internal/launcher", "internal/s3gw", "internal/s3gw/meta"},
	// The command families print through the helpers they share.
	"internal/cli/mapcmd":   {"internal/cli/cmdutil"},
	"internal/cli/radoscmd": {"internal/cli/cmdutil", "internal/bench"},
	// The block image commands print through cmdutil; rbd bench
	// summarises latencies with internal/bench.
	"internal/cli/rbdcmd":   {"internal/cli/cmdutil", "internal/bench"},
	"internal/cli/mountcmd": {"internal/cli/cmdutil", "internal/fusemount"},
	"internal/cli/fscmd":    {"internal/cli/cmdutil"},
	// The NBD commands run internal/nbd's server.
	"internal/cli/nbdcmd": {"internal/cli/cmdutil", "internal/nbd"},
	// The key-value store commands print through cmdutil; kv bench
	// summarises latencies with internal/bench.
	"internal/cli/kvcmd":   {"internal/cli/cmdutil", "internal/bench"},
	"internal/cli/toolcmd": {"internal/cli/cmdutil", "internal/bench"},
	// The S3 gateway wires its records and its signature checks; its
	// command family runs it and manages its users.
	"internal/s3gw":      {"internal/s3gw/meta", "internal/s3gw/sigv4"},
	"internal/cli/s3cmd": {"internal/cli/cmdutil", "internal/s3gw", "internal/s3gw/meta"},
}

// daemonCores are the daemons' cores: the OSD and the monitor with their
// services. Outside the cores themselves, only the packages of
// daemonAssembly import them (in non-test files): the CLI, the front ends
// and cmd/ start daemons through internal/daemon's config structs, so
// that flags never reach into a core and the simulator (test-only, so
// exempt) assembles daemons as the CLI does. A front end that needs a
// reply's shape decodes the JSON itself, as any client would.
var (
	daemonCores    = []string{"internal/osd/...", "internal/mon/..."}
	daemonAssembly = []string{"internal/daemon"}
)

// cliRoot is the root of the command tree. Its non-test files import,
// of the module, only packages under it: every command family, a future
// front end's included, is a noun package under internal/cli (radoscmd,
// toolcmd, and later s3cmd, mountcmd, nbdcmd, ...) that imports the front
// end's library, so that the root stays the wiring of the tree and never
// grows a front end's flags or code.
const cliRoot = "internal/cli"

// forbiddenInProduction are packages that non-test code of a production
// package must not import, nor a binary link in.
var forbiddenInProduction = []string{"testing", "testing/...", "net/http/httptest"}

// forbiddenEverywhere are logging and configuration packages that no file of
// the module may import: use log/slog and the config package instead.
var forbiddenEverywhere = []string{
	"log",
	"github.com/golang/glog/...",
	"github.com/sirupsen/logrus/...",
	"github.com/spf13/viper/...",
}

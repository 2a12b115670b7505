// Package archtest holds the tests that enforce Cuttle's house rules on the
// whole module; it has no code of its own, and nothing imports it.
//
// One `go list -deps -json ./...` call loads the module, and go/parser reads
// every Go file whatever its build tags. The tests then check:
//
//   - the layer table of LAYOUT.md: a package imports only packages in lower
//     layers, except for the same-layer imports listed in sameLayerImports,
//     and layer 0 imports only the standard library;
//   - every package of the module is in the layer table, so a new package is
//     placed deliberately, and the tables list only what is there: no
//     pattern that matches no package, no same-layer import allowed that
//     nothing makes (TablesCurrent);
//   - the CLI's root (internal/cli) imports only its own sub-packages: a
//     command family, a future front end's included, is a noun package
//     under internal/cli (cli/s3cmd, cli/mountcmd, ...);
//   - the daemon cores (internal/osd/..., internal/mon/...) are imported,
//     outside themselves, only by internal/daemon (daemonCores): the CLI and
//     the other front ends start daemons through its config structs;
//   - production code does not import testing, net/http/httptest or the
//     test-only packages (internal/sim, storetest, clstest, montest,
//     crushvectors, archtest), and binaries do not link them in at all;
//   - every package has a package doc comment, which starts "Package
//     name" ("Command name" for a command; doc_test.go);
//   - nothing imports the std log package, glog, logrus or viper;
//   - no file panics with a message built by fmt.Sprintf;
//   - the size budget of LAYOUT.md (size_test.go): no non-generated Go
//     file over 40 KB, no package over 10,000 lines of non-test Go.
//   - the pure cores (pure_test.go: peering, scrub, opq, replication,
//     recovery) start no goroutines, read no clock and import nothing
//     that locks or does I/O.
//
// Start reading at layers_test.go, which holds the tables. To add a package,
// add its path to layers there with the layer LAYOUT.md gives it, and list in
// sameLayerImports any import it makes of a package in its own layer (for
// example a child importing its parent, or a parent wiring its children).
//
// The tests run no goroutines of their own and share no state between them.
package archtest

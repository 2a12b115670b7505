// Package invariants holds the switch and helpers for assertions that run
// only in test builds: `make test` builds with `-tags invariants`, which
// sets Enabled; every other build (the cuttle binary, go test without the
// tag, benchmarks) compiles the assertions away.
//
// An invariant check is for corruption of a package's own state that no
// input should cause, only a bug: free extents that overlap, a PG log out
// of version order, a mapping whose primary is not in its set. It is worth
// one where a cheap-to-write check would otherwise let the damage spread
// far before anything fails (an overlapping free extent becomes two
// objects sharing a block much later). A check that validates input, or
// that production needs, is an ordinary error path, not an invariant.
//
// Use it in one of two shapes:
//
//	invariants.Assert(next.Offset > prev.End(), "free extents overlap")
//
//	if invariants.Enabled { // the check walks the whole structure
//		invariants.Check(a.verify())
//	}
//
// Assert and Check do nothing unless Enabled, and the compiler drops a
// block under `if invariants.Enabled` in other builds; but the arguments of
// Assert and Check are still evaluated, so anything costlier than a
// comparison goes inside the `if`. A violated invariant panics with an
// error that wraps ErrViolated: the test fails at the first corrupt state,
// with the stack of the operation that caused it.
//
// The package owns nothing but these helpers and imports only the
// standard library (layer 0); it must not know its callers. It has no
// state, so it is safe for concurrent use.
package invariants

//go:build !invariants

package invariants

// Enabled reports whether invariant checks run: false in builds without
// the invariants tag.
const Enabled = false

// Assert does nothing without the invariants tag; with it, it panics if
// cond is false.
func Assert(cond bool, what string) {}

// Check does nothing without the invariants tag; with it, it panics if err
// is not nil.
func Check(err error) {}

package invariants

import "errors"

// ErrViolated is wrapped by the error every failed assertion panics with,
// so a test that provokes one on purpose can recognise it with errors.Is.
var ErrViolated = errors.New("invariant violated")

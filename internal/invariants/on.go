//go:build invariants

package invariants

import (
	"errors"
	"fmt"
)

// Enabled reports whether invariant checks run: true in builds with the
// invariants tag.
const Enabled = true

// Assert panics with an error wrapping ErrViolated and naming what if cond
// is false. Without the invariants tag it does nothing.
func Assert(cond bool, what string) {
	if !cond {
		panic(violation(errors.New(what)))
	}
}

// Check panics with an error wrapping ErrViolated and err if err is not
// nil. Without the invariants tag it does nothing; call it inside
// `if invariants.Enabled` when computing err costs anything.
func Check(err error) {
	if err != nil {
		panic(violation(err))
	}
}

// violation returns the error a failed assertion panics with.
func violation(err error) error {
	return fmt.Errorf("%w: %w", ErrViolated, err)
}

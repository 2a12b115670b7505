package invariants_test

import (
	"errors"
	"testing"

	"github.com/cuttlestore/cuttle/internal/invariants"
)

// recovered runs f and returns what it panicked with, or nil.
func recovered(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// TestAssertions runs in both builds: with the invariants tag a failed
// assertion panics with an error wrapping ErrViolated and the cause, and
// without it nothing happens.
func TestAssertions(t *testing.T) {
	cause := errors.New("extents overlap")
	tests := []struct {
		name string
		f    func()
		fail bool
	}{
		{"Assert true", func() { invariants.Assert(true, "unused") }, false},
		{"Assert false", func() { invariants.Assert(false, "extents overlap") }, true},
		{"Check nil", func() { invariants.Check(nil) }, false},
		{"Check error", func() { invariants.Check(cause) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := recovered(tt.f)
			if !tt.fail || !invariants.Enabled {
				if v != nil {
					t.Fatalf("panicked with %v; want no panic (Enabled=%v)", v, invariants.Enabled)
				}
				return
			}
			err, ok := v.(error)
			if !ok {
				t.Fatalf("panicked with %T %v; want an error", v, v)
			}
			if !errors.Is(err, invariants.ErrViolated) {
				t.Errorf("panic %v does not wrap ErrViolated", err)
			}
			if err.Error() != "invariant violated: extents overlap" {
				t.Errorf("panic %q; want it to name the violated invariant", err)
			}
		})
	}
}

// TestEnabledFollowsTheTag fails if the build tag and the constant
// disagree: `make test` passes -tags invariants and relies on the checks
// running.
func TestEnabledFollowsTheTag(t *testing.T) {
	if invariants.Enabled != tagged {
		t.Errorf("Enabled = %v in a build with the invariants tag %v", invariants.Enabled, tagged)
	}
}

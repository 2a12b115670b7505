package objectstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cuttlestore/cuttle/objid"
)

func TestNotFoundError(t *testing.T) {
	c, o := PGCollection(1, 2), objid.Object(1, "ns", "obj")
	var err error = &NotFoundError{Collection: c, Object: o}
	if !errors.Is(err, ErrNotFound) || !errors.Is(fmt.Errorf("wrapped: %w", err), ErrNotFound) {
		t.Fatal("a NotFoundError is not ErrNotFound")
	}
	if errors.Is(err, ErrExists) {
		t.Fatal("a NotFoundError is ErrExists")
	}
	if got, want := err.Error(), fmt.Errorf("%w: %v %v", ErrNotFound, c, o).Error(); got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}

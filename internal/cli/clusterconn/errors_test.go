package clusterconn

import (
	"errors"
	"io/fs"
	"testing"
)

func TestNamedErrors(t *testing.T) {
	base := errors.New("osd pool create: osd pool create: pool 'x' exists")
	err := Named("osd pool create", base)
	if got := err.Error(); got != "osd pool create: pool 'x' exists" {
		t.Errorf("named: %q", got)
	}
	if !errors.Is(err, base) {
		t.Error("named does not unwrap")
	}
	if got := Named("osd pool create", errors.New("pool 'x' exists")).Error(); got != "osd pool create: pool 'x' exists" {
		t.Errorf("named: %q", got)
	}
	if Named("x", nil) != nil {
		t.Error("Named(nil) is not nil")
	}
}

func TestShownErrors(t *testing.T) {
	base := fs.ErrNotExist
	err := Shown("--conf /nope: no such file or directory", base)
	if got := err.Error(); got != "--conf /nope: no such file or directory" {
		t.Errorf("shown: %q", got)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("shown does not unwrap")
	}
}

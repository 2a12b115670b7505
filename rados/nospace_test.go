package rados

import (
	"errors"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The OSD's reply carries only ENOSPC; the client says why from its map.
func TestExplainNoSpace(t *testing.T) {
	spec, err := crush.BuildLayout(crush.Layout{Hosts: 3, OSDsPerHost: 1})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := osdmap.NewSimple(cm, 3, osdmap.Pool{ID: 1, Name: "rbd", Type: osdmap.PoolReplicated, Size: 3, MinSize: 2, PGNum: 8, PGPNum: 8})
	if err != nil {
		t.Fatal(err)
	}
	next := func(fn func(*osdmap.Spec)) *osdmap.Map {
		s := m.Spec()
		s.Epoch++
		fn(&s)
		n, err := osdmap.New(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	enospc := func() error { return &OpError{Op: "writefull", Object: "o", Errno: wire.ENOSPC} }
	for name, c := range map[string]struct {
		m    *osdmap.Map
		want string
	}{
		"pool full": {next(func(s *osdmap.Spec) {
			s.OSDs[1].State |= osdmap.OSDFull
			s.Pools[0].Flags |= osdmap.PoolFull
		}), "pool 'rbd' is full (osd.1 full, full_ratio 0.95); delete objects or add OSDs"},
		"osd full": {next(func(s *osdmap.Spec) { s.OSDs[2].State |= osdmap.OSDFull }), "osd.2 is full (full_ratio 0.95)"},
		"failsafe": {m, "osd.2 is out of space"},
	} {
		err := explainNoSpace(enospc(), c.m, 1, 2)
		if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrNoSpace saying %q", name, err, c.want)
		}
	}
	other := &OpError{Op: "read", Errno: wire.EIO}
	if err := explainNoSpace(other, m, 1, 2); err != other || other.Status != "" {
		t.Errorf("EIO changed: %v", err)
	}
}

package crush

import (
	"errors"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

func validSpec() Spec {
	spec, err := BuildLayout(Layout{Hosts: 2, OSDsPerHost: 2})
	if err != nil {
		panic(err)
	}
	return spec
}

func TestNewRejectsBadSpecs(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Spec)
		want   string
	}{
		{"duplicate device name", func(s *Spec) { s.Devices[1].Name = "osd.0" }, `name "osd.0" used by both`},
		{"negative device id", func(s *Spec) { s.Devices[0].ID = -3 }, "out of range"},
		{"huge device id", func(s *Spec) { s.Devices[0].ID = 1 << 30 }, "out of range"},
		{"positive bucket id", func(s *Spec) { s.Buckets[0].ID = 4 }, "must be negative"},
		{"duplicate bucket id", func(s *Spec) { s.Buckets[1].ID = s.Buckets[0].ID }, "used by both"},
		{"unknown alg", func(s *Spec) { s.Buckets[0].Alg = 9 }, "unknown algorithm"},
		{"unknown type", func(s *Spec) { s.Buckets[0].Type = 99 }, "unknown type"},
		{"weights mismatch", func(s *Spec) { s.Buckets[0].Weights = s.Buckets[0].Weights[:1] }, "weights"},
		{"missing item", func(s *Spec) { s.Buckets[0].Items[0] = 77 }, "not a device"},
		{"missing bucket item", func(s *Spec) { s.Buckets[2].Items[0] = -50 }, "not a bucket"},
		{"cycle", func(s *Spec) {
			s.Buckets[0].Items = append(s.Buckets[0].Items, -1)
			s.Buckets[0].Weights = append(s.Buckets[0].Weights, 1)
		}, "contains itself"},
		{"uniform unequal", func(s *Spec) { s.Buckets[0].Alg = AlgUniform; s.Buckets[0].Weights[0] = 5 }, "unequal"},
		{"weight overflow", func(s *Spec) { s.Buckets[0].Weights[0], s.Buckets[0].Weights[1] = 1<<31, 1<<31 }, "overflows"},
		{"tilde name", func(s *Spec) { s.Buckets[0].Name = "a~b" }, "reserved"},
		{"take missing", func(s *Spec) { s.Rules[0].Steps[0].Arg1 = -40 }, "take: no item"},
		{"take unknown class", func(s *Spec) { s.Rules[0].Steps[0].Class = "nvme" }, "no such device class"},
		{"choose unknown type", func(s *Spec) { s.Rules[0].Steps[1].Arg2 = 42 }, "unknown type"},
		{"bad op", func(s *Spec) { s.Rules[0].Steps[0].Op = 5 }, "unknown op"},
		{"duplicate rule", func(s *Spec) { s.Rules[1].ID = 0 }, "used by both"},
		{"choose_args bucket", func(s *Spec) {
			s.ChooseArgs = map[int64][]ChooseArg{-1: {{BucketID: -30}}}
		}, "no bucket"},
		{"choose_args size", func(s *Spec) {
			s.ChooseArgs = map[int64][]ChooseArg{-1: {{BucketID: -1, Weights: [][]uint32{{1}}}}}
		}, "weight set of 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := validSpec()
			tc.mutate(&spec)
			_, err := New(spec)
			if err == nil || !errors.Is(err, ErrInvalidMap) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an ErrInvalidMap containing %q", err, tc.want)
			}
		})
	}
}

func TestNewDoesNotAliasSpec(t *testing.T) {
	spec := validSpec()
	m, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Buckets[0].Items[0] = 99
	spec.Rules[0].Steps[0].Arg1 = 99
	if m.Bucket(spec.Buckets[0].ID).Items[0] == 99 || m.Rule(0).Steps[0].Arg1 == 99 {
		t.Fatal("map shares memory with its spec")
	}
}

func TestBuildLayout(t *testing.T) {
	spec, err := BuildLayout(Layout{Racks: 3, Hosts: 3, OSDsPerHost: 4})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Devices()) != 36 || len(m.Buckets()) != 13 {
		t.Fatalf("got %d devices and %d buckets", len(m.Devices()), len(m.Buckets()))
	}
	if w := m.Bucket(-1).Weight(); w != 36*WeightOne {
		t.Errorf("root weight %#x", w)
	}
	// Every replica of the default rule lands on a different host.
	ws := m.NewWorkspace()
	out := make([]int32, 3)
	weights := make([]uint32, 36)
	for i := range weights {
		weights[i] = WeightOne
	}
	for x := range int32(1000) {
		n := m.DoRule(ws, 0, x, out, weights, nil)
		if n != 3 {
			t.Fatalf("x %d: %d replicas", x, n)
		}
		hosts := map[int32]bool{}
		for _, osd := range out {
			hosts[osd/4] = true
		}
		if len(hosts) != 3 {
			t.Fatalf("x %d: replicas %v share a host", x, out)
		}
	}
	for _, bad := range []Layout{{}, {Hosts: 1}, {Hosts: 1, OSDsPerHost: 1, FailureDomain: "galaxy"}, {Hosts: 2, OSDsPerHost: 1, FailureDomain: "rack"}, {Hosts: 1 << 20, OSDsPerHost: 1 << 20}} {
		if _, err := BuildLayout(bad); err == nil {
			t.Errorf("BuildLayout(%+v) accepted", bad)
		}
	}
}

// TestBuildLayoutMatchesCephRacks checks that the builder's 3x3x4 map maps
// exactly like the racks map compiled by crushtool (same ids and weights).
func TestBuildLayoutMatchesCephRacks(t *testing.T) {
	spec, err := BuildLayout(Layout{Racks: 3, Hosts: 3, OSDsPerHost: 4})
	if err != nil {
		t.Fatal(err)
	}
	built, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	cephSpec, _ := specFromDump(t, crushvectors.Path(t, "maps/racks.json"))
	ceph, err := New(cephSpec)
	if err != nil {
		t.Fatal(err)
	}
	ws1, ws2 := built.NewWorkspace(), ceph.NewWorkspace()
	weights := make([]uint32, 36)
	for i := range weights {
		weights[i] = WeightOne
	}
	a, b := make([]int32, 3), make([]int32, 3)
	for x := range int32(2000) {
		na := built.DoRule(ws1, 0, x, a, weights, nil)
		nb := ceph.DoRule(ws2, 0, x, b, weights, nil) // by_host
		if na != nb || a[0] != b[0] || a[1] != b[1] || a[2] != b[2] {
			t.Fatalf("x %d: %v vs crushtool's %v", x, a[:na], b[:nb])
		}
	}
}

func TestSpecRoundTrip(t *testing.T) {
	spec, err := BuildLayout(Layout{Racks: 2, Hosts: 2, OSDsPerHost: 3, DeviceClass: "hdd"})
	if err != nil {
		t.Fatal(err)
	}
	spec.Rules[0].Steps[0].Class = "hdd"
	m, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if b := m.Bucket(m.Rule(0).Steps[0].Arg1); b == nil || !b.IsShadow() || b.Name != "default~hdd" {
		t.Fatalf("class take resolved to %+v", b)
	}
	m2, err := New(m.Spec())
	if err != nil {
		t.Fatal(err)
	}
	assertSameMappings(t, m, m2)
	if len(m2.Buckets()) != len(m.Buckets()) {
		t.Fatal("shadow buckets differ")
	}
}

func TestDoRuleUnknownRuleAndEmptyOutput(t *testing.T) {
	m, err := New(validSpec())
	if err != nil {
		t.Fatal(err)
	}
	ws := m.NewWorkspace()
	if n := m.DoRule(ws, 7, 1, make([]int32, 3), []uint32{WeightOne}, nil); n != 0 {
		t.Errorf("unknown rule mapped to %d items", n)
	}
	if n := m.DoRule(ws, 0, 1, nil, []uint32{WeightOne}, nil); n != 0 {
		t.Errorf("empty output got %d items", n)
	}
	// A workspace built for another map is rebound, not misused.
	other, _ := New(validSpec())
	out := make([]int32, 2)
	if n := other.DoRule(ws, 0, 1, out, []uint32{WeightOne, WeightOne, WeightOne, WeightOne}, nil); n != 2 {
		t.Errorf("rebound workspace mapped %d items", n)
	}
}

package crush

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

func TestCodecRoundTrip(t *testing.T) {
	for _, name := range []string{"classes", "choose_args_compat", "alg_tree", "alg_straw", "tunables_legacy", "racks"} {
		t.Run(name, func(t *testing.T) {
			spec, _ := specFromDump(t, crushvectors.Path(t, "maps/"+name+".json"))
			m, err := New(spec)
			if err != nil {
				t.Fatal(err)
			}
			data, err := m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			m2, err := UnmarshalBinary(data)
			if err != nil {
				t.Fatal(err)
			}
			data2, _ := m2.MarshalBinary()
			if !bytes.Equal(data, data2) {
				t.Fatal("re-encoding a decoded map changed it")
			}
			assertSameMappings(t, m, m2)
		})
	}
}

// assertSameMappings maps a range of inputs through every rule of both maps.
func assertSameMappings(t *testing.T, a, b *Map) {
	t.Helper()
	wa, wb := a.NewWorkspace(), b.NewWorkspace()
	weights := make([]uint32, a.MaxDevices())
	for i := range weights {
		weights[i] = WeightOne
	}
	oa, ob := make([]int32, 4), make([]int32, 4)
	for _, r := range a.Rules() {
		for x := range int32(500) {
			na := a.DoRule(wa, r.ID, x, oa, weights, a.ChooseArgsFor(0))
			nb := b.DoRule(wb, r.ID, x, ob, weights, b.ChooseArgsFor(0))
			if !slices.Equal(oa[:na], ob[:nb]) {
				t.Fatalf("rule %d x %d: %v vs %v", r.ID, x, oa[:na], ob[:nb])
			}
		}
	}
}

func TestUnmarshalRejectsBadInput(t *testing.T) {
	spec, _ := specFromDump(t, crushvectors.Path(t, "maps/hosts.json"))
	m, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := m.MarshalBinary()
	for n := range len(good) {
		if _, err := UnmarshalBinary(good[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
	if _, err := UnmarshalBinary([]byte("# begin crush map")); !errors.Is(err, encoding.ErrCorrupt) {
		t.Errorf("text input: %v", err)
	}
	future := bytes.Clone(good)
	future[len(binaryMagic)] = codecVersion + 1  // a newer encoder...
	future[len(binaryMagic)+1] = codecCompat + 1 // ...that older decoders cannot read
	if _, err := UnmarshalBinary(future); !errors.Is(err, encoding.ErrUnsupportedVersion) {
		t.Errorf("future compat version: %v", err)
	}
}

func FuzzUnmarshalBinary(f *testing.F) {
	spec, err := BuildLayout(Layout{Racks: 2, Hosts: 2, OSDsPerHost: 2, DeviceClass: "ssd"})
	if err != nil {
		f.Fatal(err)
	}
	m, err := New(spec)
	if err != nil {
		f.Fatal(err)
	}
	seed, _ := m.MarshalBinary()
	f.Add(seed)
	f.Add([]byte("CRSH"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := UnmarshalBinary(data)
		if err != nil {
			return
		}
		enc, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		m2, err := UnmarshalBinary(enc)
		if err != nil {
			t.Fatalf("re-decoding failed: %v", err)
		}
		enc2, _ := m2.MarshalBinary()
		if !bytes.Equal(enc, enc2) {
			t.Fatal("encoding not stable")
		}
		// Mapping with a decoded map must not panic either.
		ws := m.NewWorkspace()
		out := make([]int32, 3)
		weights := make([]uint32, m.MaxDevices())
		for i := range weights {
			weights[i] = WeightOne
		}
		for _, r := range m.Rules() {
			for x := range int32(8) {
				m.DoRule(ws, r.ID, x, out, weights, m.ChooseArgsFor(0))
			}
		}
	})
}

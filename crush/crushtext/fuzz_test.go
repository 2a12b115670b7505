package crushtext

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

// FuzzParse feeds arbitrary text to the compiler. It must never panic and
// must fail only with *SyntaxError. What compiles must decompile to text
// that compiles again and is stable from then on.
//
// The brief's property decompile(compile(decompile(compile(x)))) ==
// decompile(compile(x)) holds exactly when printing loses nothing. Ceph's
// format can lose two things in the first round, and the target allows
// for both: weights print with three decimals (so 0.0004 + 0.0004 + 0.0004
// totals "0.001" but each item prints, and reads back, as 0.000), and class
// ids follow the order in which classes first appear, which the printed
// device list (sorted by id) can change. Ceph behaves the same.
func FuzzParse(f *testing.F) {
	for _, name := range crushvectors.MapNames(f) {
		f.Add(crushvectors.ReadFile(f, "maps/"+name+".txt"))
	}
	f.Add([]byte(header + hostH0 + "rule a {\n\tid 0\n\ttype replicated\n\tstep take h0 class ssd\n\tstep emit\n}\n"))
	f.Add([]byte("device 1 b class hdd\ndevice 0 a class ssd\ntype 1 host\nhost h { alg uniform item a item b }\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if spec, err := Parse(src); err == nil && hugeIDs(spec) {
			t.Skip("large ids are valid but make maps of many megabytes")
		}
		m1, err := Compile(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is not a *SyntaxError", err, err)
			}
			return
		}
		d1 := Decompile(m1)
		m2, err := Compile(d1)
		lossless := weightsSurvivePrinting(m1)
		if err != nil {
			if lossless {
				t.Fatalf("decompiled map does not compile: %v\n%s", err, d1)
			}
			return // rounded weights can make a uniform shadow uneven
		}
		d2 := Decompile(m2)
		if lossless && slices.Equal(m1.Classes(), m2.Classes()) && !bytes.Equal(d1, d2) {
			t.Fatalf("decompiling is not stable:\n%s", firstDiff(string(d2), string(d1)))
		}
		m3, err := Compile(d2)
		if err != nil {
			t.Fatalf("second decompiled map does not compile: %v\n%s", err, d2)
		}
		if d3 := Decompile(m3); !bytes.Equal(d2, d3) {
			t.Fatalf("decompiling is not stable after two rounds:\n%s", firstDiff(string(d3), string(d2)))
		}
	})
}

// hugeIDs reports whether spec uses ids far beyond the vector maps'; the
// map's tables grow with the largest id.
func hugeIDs(spec crush.Spec) bool {
	const limit = 1 << 14
	for _, d := range spec.Devices {
		if d.ID > limit {
			return true
		}
	}
	for _, b := range spec.Buckets {
		if b.ID < -limit {
			return true
		}
		for _, id := range b.ClassIDs {
			if id < -limit {
				return true
			}
		}
	}
	return false
}

// weightsSurvivePrinting reports whether every item weight of m reads back
// from its printed form unchanged.
func weightsSurvivePrinting(m *crush.Map) bool {
	for _, b := range m.Buckets() {
		for _, w := range b.Weights {
			if back, err := ParseWeight(FormatWeight(w)); err != nil || back != w {
				return false
			}
		}
	}
	return true
}

package crushtext

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
)

func mustCompile(t *testing.T, src string) *crush.Map {
	t.Helper()
	m, err := Compile([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDefaultTunablesAreLegacy: a map without tunable lines gets argonaut
// tunables, not optimal ones (vectors README, item 1), and prints none.
func TestDefaultTunablesAreLegacy(t *testing.T) {
	m := mustCompile(t, header+hostH0)
	if m.Tunables() != crush.LegacyTunables() {
		t.Errorf("tunables %+v, want legacy %+v", m.Tunables(), crush.LegacyTunables())
	}
	if bytes.Contains(Decompile(m), []byte("tunable")) {
		t.Errorf("legacy tunables printed")
	}
}

// TestItemPositions: an item with "pos P" takes slot P; the others fill
// the free slots in order (CrushCompiler::parse_bucket).
func TestItemPositions(t *testing.T) {
	m := mustCompile(t, `device 0 a
device 1 b
device 2 c
type 0 osd
type 1 host
host h {
	alg tree
	item a pos 2
	item b
	item c pos 0
}
`)
	if got, want := m.Bucket(-1).Items, []int32{2, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("items %v, want %v", got, want)
	}
}

// TestItemWeights: a device defaults to 1.0, a bucket to its total, and an
// explicit weight overrides either (vectors README, item 2).
func TestItemWeights(t *testing.T) {
	m := mustCompile(t, header+`host h0 {
	id -2
	alg straw2
	item osd.0 weight 0.1
	item osd.1
}
host h1 {
	id -3
	alg straw2
	item osd.0 weight 3.7
}
root r {
	id -1
	alg straw2
	item h0
	item h1 weight 2
}
`)
	if got, want := m.Bucket(-2).Weights, []uint32{6553, 0x10000}; !slices.Equal(got, want) {
		t.Errorf("h0 weights %v, want %v", got, want)
	}
	if got, want := m.Bucket(-1).Weights, []uint32{6553 + 0x10000, 0x20000}; !slices.Equal(got, want) {
		t.Errorf("root weights %v, want %v", got, want)
	}
	if got := m.Bucket(-1).Weight(); got != 6553+0x30000 {
		t.Errorf("root weight %d", got)
	}
}

// TestBucketIDAllocation: a bucket without an id line gets the highest id
// that no id line anywhere claims (Ceph's find_used_bucket_ids).
func TestBucketIDAllocation(t *testing.T) {
	m := mustCompile(t, header+`host h0 {
	alg straw2
	item osd.0
}
root r {
	id -1
	alg straw2
	item h0
}
`)
	if id, _ := m.ItemID("h0"); id != -2 {
		t.Errorf("h0 got id %d, want -2", id)
	}
}

// TestRuleHeader: "ruleset" is accepted for "id", numeric types print as
// numbers, and min_size/max_size (dropped by Ceph 17) default to 1 and 100.
func TestRuleHeader(t *testing.T) {
	m := mustCompile(t, header+hostH0+`rule {
	ruleset 4
	type 2
	step take h0
	step emit
}
`)
	r := m.Rule(4)
	if r == nil || r.Type != 2 || r.MinSize != defaultMinSize || r.MaxSize != defaultMaxSize || r.Name != "" {
		t.Fatalf("rule %+v", r)
	}
	want := "rule  {\n\tid 4\n\ttype 2\n\tmin_size 1\n\tmax_size 100\n\tstep take h0\n\tstep emit\n}\n"
	if text := string(Decompile(m)); !strings.Contains(text, want) {
		t.Errorf("rule printed as\n%s\nwant\n%s", text, want)
	}
}

// TestClassTake: "step take B class C" takes B's shadow for C; the shadow
// id comes from "id -N class C" and prints back as the class form.
func TestClassTake(t *testing.T) {
	m := mustCompile(t, header+`host h0 {
	id -2
	id -5 class ssd
	alg straw2
	item osd.0
	item osd.1
}
rule a {
	id 0
	type replicated
	step take h0 class ssd
	step emit
}
`)
	if got := m.Rule(0).Steps[0].Arg1; got != -5 {
		t.Errorf("take %d, want the ssd shadow -5", got)
	}
	text := string(Decompile(m))
	for _, want := range []string{"\tid -5 class ssd\t\t# do not change unnecessarily\n", "\tstep take h0 class ssd\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, "~") {
		t.Errorf("shadow bucket printed:\n%s", text)
	}
}

// TestChooseArgsOnStrawDropped: only straw2 buckets use choose_args; Ceph
// drops them for other algorithms (vectors README, item 5).
func TestChooseArgsOnStrawDropped(t *testing.T) {
	m := mustCompile(t, header+`host h0 {
	id -2
	alg straw
	item osd.0
}
host h1 {
	id -3
	alg straw2
	item osd.1
}
choose_args 18446744073709551615 {
	{
		bucket_id -2
		weight_set [ [ 2.0 ] ]
	}
	{
		bucket_id -3
		weight_set [ [ 3.0 ] ]
		ids [ 7 ]
	}
}
`)
	args := m.ChooseArgs(crush.ChooseArgsCompat).Args()
	if len(args) != 1 || args[0].BucketID != -3 || args[0].IDs[0] != 7 || args[0].Weights[0][0] != 3<<16 {
		t.Fatalf("args %+v, want only bucket -3's", args)
	}
	want := "\n# choose_args\nchoose_args 18446744073709551615 {\n  {\n    bucket_id -3\n    weight_set [\n      [ 3.000 ]\n    ]\n    ids [ 7 ]\n  }\n}\n"
	if text := string(Decompile(m)); !strings.Contains(text, want) {
		t.Errorf("choose_args printed as\n%s", text)
	}
}

// TestTypeZeroPrinted: Ceph prints "type 0 osd" when the map has no type 0.
func TestTypeZeroPrinted(t *testing.T) {
	m := mustCompile(t, "type 1 host\n")
	if text := string(Decompile(m)); !strings.Contains(text, "# types\ntype 0 osd\ntype 1 host\n") {
		t.Errorf("got\n%s", text)
	}
}

// TestCommentsAndLayout: comments run to the end of a line and layout is
// free, as in Ceph, which squashes whitespace before parsing.
func TestCommentsAndLayout(t *testing.T) {
	m := mustCompile(t, "# a map\ndevice 0 osd.0 # the only one\ntype 0 osd type 1 host host h{alg straw2 item osd.0 weight 2}")
	if m.Bucket(-1).Weight() != 2<<16 {
		t.Errorf("weight %d", m.Bucket(-1).Weight())
	}
}

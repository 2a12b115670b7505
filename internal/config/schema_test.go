package config

import (
	"reflect"
	"testing"
)

func TestSchema(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range Schema() {
		if seen[o.Name] {
			t.Errorf("%s twice", o.Name)
		}
		seen[o.Name] = true
		if v, err := o.Parse(o.Default); err != nil || v != o.Default {
			t.Errorf("%s: default %q is not canonical: %q %v", o.Name, o.Default, v, err)
		}
		if o.Desc == "" {
			t.Errorf("%s: no description", o.Name)
		}
	}
	size := Option{Name: "s", Type: TypeSize}
	for in, want := range map[string]string{"4096": "4096", "64K": "65536", "1MiB": "1048576", "2G": "2147483648", "1t": "1099511627776"} {
		if got, err := size.Parse(in); err != nil || got != want {
			t.Errorf("size %q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "K", "-1", "1X", "99999999999T"} {
		if _, err := size.Parse(bad); err == nil {
			t.Errorf("size %q accepted", bad)
		}
	}
}

// TestLookupMatchesSchema checks that Lookup finds every option of the
// table as Schema gives it, finds no other, and that a caller changing
// what Lookup returned changes nothing the next caller sees.
func TestLookupMatchesSchema(t *testing.T) {
	for _, want := range Schema() {
		got, ok := Lookup(want.Name)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("Lookup(%q) = %+v, %v; want %+v", want.Name, got, ok, want)
		}
	}
	if o, ok := Lookup("no_such_option"); ok {
		t.Errorf("Lookup(no_such_option) = %+v, true", o)
	}
	o, _ := Lookup("osd_objectstore")
	o.Enum[0] = "changed"
	o.Daemons = append(o.Daemons[:0], "changed")
	again, _ := Lookup("osd_objectstore")
	if again.Enum[0] != "blockstore" || len(again.Daemons) != 0 {
		t.Errorf("a caller's change reached the table: %+v", again)
	}
	w, _ := Lookup("osd_client_watch_timeout")
	w.Daemons[0] = "changed"
	if again, _ := Lookup("osd_client_watch_timeout"); again.Daemons[0] != "osd" {
		t.Errorf("a caller's change reached the table: %+v", again)
	}
}

// BenchmarkLookup measures one Lookup of an option near the end of the
// table, as each daemon's config poll does for every option it reads.
func BenchmarkLookup(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Lookup("osd_client_watch_timeout"); !ok {
			b.Fatal("osd_client_watch_timeout not found")
		}
	}
}

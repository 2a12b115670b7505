package config

import (
	"errors"
	"testing"
)

func TestParseAndLookup(t *testing.T) {
	f, err := Parse([]byte(`
# cluster
[global]
	fsid = 1234
	mon host = a=127.0.0.1:6789   # the monitors
	auth = cephx
[osd]
	osd-max-backfills = 2
[osd.3]
	osd_max_backfills = 5
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ entity, name, want string }{
		{"osd.3", "osd max backfills", "5"},
		{"osd.1", "osd_max_backfills", "2"},
		{"client.admin", "mon_host", "a=127.0.0.1:6789"},
		{"", "fsid", "1234"},
	} {
		if got, ok := f.Get(c.entity, c.name); !ok || got != c.want {
			t.Errorf("Get(%q, %q) = %q, %v; want %q", c.entity, c.name, got, ok, c.want)
		}
	}
	if _, ok := f.Get("mon.a", "osd_max_backfills"); ok {
		t.Error("osd section leaked into mon.a")
	}
	again, err := Parse(f.Marshal())
	if err != nil || string(again.Marshal()) != string(f.Marshal()) {
		t.Fatalf("marshal round trip: %v\n%s", err, f.Marshal())
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"x = 1", "[global\nx=1", "[global]\njunk", "[global]\n = 3", "[]"} {
		if _, err := Parse([]byte(in)); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q): %v, want ErrSyntax", in, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("[global]\nfsid = x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("unclassified: %v", err)
			}
			return
		}
		if _, err := Parse(c.Marshal()); err != nil {
			t.Fatalf("marshaled file does not parse: %v\n%s", err, c.Marshal())
		}
	})
}

package config

import "testing"

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

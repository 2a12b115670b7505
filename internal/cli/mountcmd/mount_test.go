package mountcmd

import (
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	cases := []struct {
		in                  string
		attr, entry, negTTL time.Duration
		extra               int
		bad                 bool
	}{
		{in: "allow_other,ro"},
		{in: "attr_timeout=0.5,entry_timeout=2", attr: 500 * time.Millisecond, entry: 2 * time.Second},
		{in: "negative_timeout=0", negTTL: -1},
		{in: "attr_timeout=0,entry_timeout=0", attr: -1, entry: -1},
		{in: "attr_timeout=soon", bad: true},
		{in: "entry_timeout=-1", bad: true},
		{in: "noatime", extra: 1},
	}
	for _, c := range cases {
		mo, err := parseOptions(c.in)
		if (err != nil) != c.bad {
			t.Errorf("%q: error %v, want error %v", c.in, err, c.bad)
			continue
		}
		if c.bad {
			continue
		}
		if mo.AttrTimeout != c.attr || mo.EntryTimeout != c.entry || mo.NegativeTimeout != c.negTTL || len(mo.Extra) != c.extra {
			t.Errorf("%q: attr %v entry %v negative %v extra %v", c.in, mo.AttrTimeout, mo.EntryTimeout, mo.NegativeTimeout, mo.Extra)
		}
	}
}

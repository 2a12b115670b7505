package fusemount

import (
	"testing"
	"time"
)

// The mount's -o caps bound what the client says the kernel may cache;
// 0 leaves the client's caps and leases the only bound, negative
// caches nothing.
func TestTimeouts(t *testing.T) {
	s := time.Second
	cases := []struct {
		lim                 timeouts
		valid               time.Duration
		attr, entry, negTTL time.Duration
	}{
		{timeouts{}, 3 * s, 3 * s, 3 * s, 3 * s},
		{timeouts{}, 0, 0, 0, 0},
		{timeouts{attrMax: s, entryMax: 2 * s, negativeMax: -1}, 3 * s, s, 2 * s, 0},
		{timeouts{attrMax: -1, entryMax: -1}, 3 * s, 0, 0, 3 * s},
		{timeouts{attrMax: 5 * s}, s, s, s, s},
	}
	for i, c := range cases {
		if got := c.lim.attr(c.valid); got != c.attr {
			t.Errorf("%d: attr %v, want %v", i, got, c.attr)
		}
		if got := c.lim.entry(c.valid, false); got != c.entry {
			t.Errorf("%d: entry %v, want %v", i, got, c.entry)
		}
		if got := c.lim.entry(c.valid, true); got != c.negTTL {
			t.Errorf("%d: negative %v, want %v", i, got, c.negTTL)
		}
	}
}

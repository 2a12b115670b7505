package fusemount

import (
	"encoding/json"
	"errors"
	"syscall"
	"testing"
	"time"
)

func TestParseVxattr(t *testing.T) {
	for _, c := range []struct {
		name     string
		want     vxattr
		readable bool
	}{
		{"user.foo", vxNone, false},
		{"security.capability", vxNone, false},
		{"cuttle", vxNone, false},
		{"cuttlex.statlite", vxNone, false},
		{"cuttle.", vxUnknown, false},
		{"cuttle.statlite.atime", vxUnknown, false},
		{"cuttle.statlite", vxStatlite, true},
		{"cuttle.statlite.size", vxStatliteSize, true},
		{"cuttle.statlite.mtime", vxStatliteMtime, true},
		{"cuttle.lazyio", vxLazyIO, true},
		{"cuttle.lazyio.propagate", vxPropagate, false},
		{"cuttle.lazyio.synchronize", vxSynchronize, false},
		{"CUTTLE.lazyio", vxNone, false},
	} {
		got := parseVxattr(c.name)
		if got != c.want || got.readable() != c.readable {
			t.Errorf("parseVxattr(%q) = %v (readable %v), want %v (readable %v)", c.name, got, got.readable(), c.want, c.readable)
		}
	}
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{"1": true, "on": true, "TRUE": true, "1\n": true, "0": false, "off": false, "false\n": false} {
		got, err := parseBool([]byte(in))
		if err != nil || got != want {
			t.Errorf("parseBool(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "yes please"} {
		if _, err := parseBool([]byte(in)); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("parseBool(%q) = %v, want EINVAL", in, err)
		}
	}
}

func TestStatliteValues(t *testing.T) {
	tm := time.Unix(1700000000, 5).UTC()
	if got := fmtTime(tm); got != "1700000000.000000005" {
		t.Errorf("fmtTime = %q", got)
	}
	b := marshalStatlite(statliteJSON{Ino: 7, Size: 42, Mtime: tm.Format(time.RFC3339Nano), SizeExact: false, MtimeExact: true})
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back["size"] != float64(42) || back["size_exact"] != false || back["mtime_exact"] != true || back["mtime"] != "2023-11-14T22:13:20.000000005Z" {
		t.Errorf("cuttle.statlite = %s", b)
	}
}

package admincmd

import (
	"maps"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/auth"
)

func TestParseCapsArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want auth.Caps
		err  string
	}{
		{nil, auth.Caps{}, ""},
		{[]string{"mon=allow r"}, auth.Caps{"mon": "allow r"}, ""},
		{[]string{"mon=allow r", "osd=allow rw pool=rbd"}, auth.Caps{"mon": "allow r", "osd": "allow rw pool=rbd"}, ""},
		{[]string{"mon", "allow r", "osd", "allow rw pool=rbd"}, auth.Caps{"mon": "allow r", "osd": "allow rw pool=rbd"}, ""},
		{[]string{"osd", "allow rw pool=rbd", "mds="}, auth.Caps{"osd": "allow rw pool=rbd", "mds": ""}, ""},
		{[]string{"mon"}, nil, "want SERVICE=CAPS"},
		{[]string{"allow rw pool=rbd"}, nil, "want SERVICE=CAPS"},
		{[]string{"mon=allow r", "mon", "allow w"}, nil, "given twice"},
	} {
		got, err := parseCapsArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.args, got, err, tc.want)
		}
	}
}

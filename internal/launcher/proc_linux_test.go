package launcher

import (
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	// The command name may hold spaces and parentheses.
	line := "1234 (a) b (c) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 7777 1000000 200 18446744073709551615\n"
	st, err := parseStat([]byte(line))
	if err != nil || st != (procState{Exists: true, Start: 7777, Threads: 3}) {
		t.Fatalf("parseStat = %+v, %v", st, err)
	}
	st, err = parseStat([]byte(strings.Replace(line, ") S ", ") Z ", 1)))
	if err != nil || !st.Zombie {
		t.Fatalf("zombie: %+v, %v", st, err)
	}
	for _, bad := range []string{"", "1 (x S 1 2", "1 (x) S 1 2 3", strings.Replace(line, " 7777 ", " x ", 1), strings.Replace(line, " 3 0 7777", " x 0 7777", 1)} {
		if st, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) = %+v, want an error", bad, st)
		}
	}
}

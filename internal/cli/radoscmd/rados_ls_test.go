package radoscmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
)

// Plain listings print a name a line, so names holding a newline or
// another control byte are quoted as Go strings (as is one that begins
// with a double quote, so that a quoted line is never a name printed as
// it is); other names, a backslash and non-ASCII letters included, print
// unchanged. JSON keeps every name exact.
func TestLineSafe(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain-name.txt", "plain-name.txt"},
		{"with space", "with space"},
		{"naïve", "naïve"},
		{`back\slash`, `back\slash`},
		{"a\nb", `"a\nb"`},
		{"c\x01d", `"c\x01d"`},
		{"tab\there", `"tab\there"`},
		{"del\x7f", `"del\x7f"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
		{"ctl\\\x01", `"ctl\\\x01"`},
		{`"quoted"`, `"\"quoted\""`},
		{"mid\"dle", "mid\"dle"},
	} {
		if got := lineSafe(tc.in); got != tc.want {
			t.Errorf("lineSafe(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// `rados ls`, `ls --all`, `stat`, `listxattr`, `listomapkeys` and
// `listomapvals` quote names that need it in plain output only.
func TestRadosListingsQuoteNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRados(t)
		names := []string{"a\nb", "c\x01d", `e\f`, "plain"}
		for _, n := range names {
			s.must("x", "rados", "-p", "rbd", "put", n, "-")
		}
		s.must("x", "rados", "-p", "rbd", "-N", "n\ts", "put", "in ns", "-")
		if got, want := sortedLines(s.must("", "rados", "-p", "rbd", "ls")), "\"a\\nb\"\n\"c\\x01d\"\ne\\f\nplain\n"; got != want {
			t.Errorf("ls:\n%q\nwant\n%q", got, want)
		}
		var ls []lsEntry
		if err := json.Unmarshal([]byte(s.must("", "--format", "json", "rados", "-p", "rbd", "ls")), &ls); err != nil || len(ls) != 4 {
			t.Fatalf("ls json: %v %v", ls, err)
		}
		got := map[string]bool{}
		for _, e := range ls {
			got[e.Name] = true
		}
		for _, n := range names {
			if !got[n] {
				t.Errorf("ls json lacks %q: %v", n, ls)
			}
		}
		if out := s.must("", "rados", "-p", "rbd", "ls", "--all"); !strings.Contains(out, "\"n\\ts\"\tin ns\n") || !strings.Contains(out, "\t\"a\\nb\"\n") {
			t.Errorf("ls --all:\n%q", out)
		}
		if out := s.must("", "rados", "-p", "rbd", "stat", "a\nb"); !strings.HasPrefix(out, "\"rbd/a\\nb\" mtime ") {
			t.Errorf("stat: %q", out)
		}
		ioc, err := s.conn().OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := ioc.SetOmap(ctx, "plain", map[string][]byte{"k\n1": []byte("v"), `k\2`: []byte("w")}); err != nil {
			t.Fatal(err)
		}
		if err := ioc.SetXattr(ctx, "plain", "x\x02", []byte("v")); err != nil {
			t.Fatal(err)
		}
		if out := s.must("", "rados", "-p", "rbd", "listomapkeys", "plain"); out != "\"k\\n1\"\nk\\2\n" {
			t.Errorf("listomapkeys: %q", out)
		}
		if out := s.must("", "rados", "-p", "rbd", "listomapvals", "plain"); !strings.HasPrefix(out, "\"k\\n1\"\nvalue (1 bytes) :\n") {
			t.Errorf("listomapvals: %q", out)
		}
		if out := s.must("", "rados", "-p", "rbd", "listxattr", "plain"); out != "\"x\\x02\"\n" {
			t.Errorf("listxattr: %q", out)
		}
		var keys []string
		if err := json.Unmarshal([]byte(s.must("", "--format", "json", "rados", "-p", "rbd", "listomapkeys", "plain")), &keys); err != nil ||
			len(keys) != 2 || keys[0] != "k\n1" || keys[1] != `k\2` {
			t.Errorf("listomapkeys json: %q %v", keys, err)
		}
	})
}

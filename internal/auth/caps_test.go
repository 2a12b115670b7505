package auth

import (
	"errors"
	"strings"
	"testing"
)

// Cap semantics follow Ceph's documentation: doc/rados/operations/
// user-management.rst, section "Authorization (Capabilities)" (cited
// below as "Caps"), and its "Namespace" section.

type capCase struct {
	req  Request
	want bool
}

func checkCaps(t *testing.T, service, text string, cases []capCase) {
	t.Helper()
	g, err := ParseCaps(service, text)
	if err != nil {
		t.Fatalf("ParseCaps(%s, %q): %v", service, text, err)
	}
	for _, c := range cases {
		if c.req.Service == "" {
			c.req.Service = service
		}
		if got := g.Allows(c.req); got != c.want {
			t.Errorf("%s %q allows %s = %v, want %v", service, text, c.req, got, c.want)
		}
	}
}

const (
	r  = AccessRead
	w  = AccessWrite
	x  = AccessExec
	cr = AccessClassRead
	cw = AccessClassWrite
)

// Caps, "r": read access; "w": write access to objects; "x": call class
// methods (both read and write); "class-read"/"class-write": subsets of x.
func TestCapsAccessBits(t *testing.T) {
	checkCaps(t, "osd", "allow r", []capCase{
		{Request{Access: r, Pool: "any"}, true},
		{Request{Access: w, Pool: "any"}, false},
		{Request{Access: r | w}, false},
		{Request{Access: r | cr}, false},
		{Request{Access: 0}, false}, // a request needing nothing named is never allowed by access bits
	})
	checkCaps(t, "osd", "allow rw", []capCase{
		{Request{Access: r | w}, true},
		{Request{Access: x}, false},
	})
	checkCaps(t, "osd", "allow rwx", []capCase{
		{Request{Access: r | w | x}, true},
		{Request{Access: r | cr}, true}, // x implies class-read
		{Request{Access: w | cw}, true}, // and class-write
	})
	checkCaps(t, "osd", "allow r class-read", []capCase{
		{Request{Access: r | cr}, true},
		{Request{Access: w | cw}, false},
		{Request{Access: x}, false}, // class-read is a subset of x, not x
	})
	checkCaps(t, "osd", "allow class-write", []capCase{
		{Request{Access: cw}, true},
		{Request{Access: w | cw}, false}, // a class write method also needs w
	})
}

// Caps, "*": read, write and execute for a daemon or pool, and admin
// commands.
func TestCapsStar(t *testing.T) {
	for _, text := range []string{"allow *", "allow all"} {
		checkCaps(t, "mon", text, []capCase{
			{Request{Access: r | w | x}, true},
			{Request{Command: "osd pool create"}, true},
			{Request{Service: "osd", Access: r}, false}, // mon caps say nothing of osds
		})
	}
	checkCaps(t, "osd", "allow * pool=a", []capCase{
		{Request{Access: r | w | x, Pool: "a"}, true},
		{Request{Access: r, Pool: "b"}, false},
	})
}

// Caps: "allow {access} [pool={pool-name} [namespace={namespace-name}]]";
// and the warning that caps without a pool restriction reach ALL pools.
// Namespace: reads and writes take place only within the namespace.
func TestCapsPoolAndNamespace(t *testing.T) {
	checkCaps(t, "osd", "allow rw", []capCase{
		{Request{Access: r | w, Pool: "liverpool"}, true},
		{Request{Access: r | w, Pool: "everton", Namespace: "n"}, true},
	})
	checkCaps(t, "osd", "allow rw pool=liverpool", []capCase{
		{Request{Access: r | w, Pool: "liverpool"}, true},
		{Request{Access: r | w, Pool: "liverpool", Namespace: "any"}, true}, // no namespace clause: every namespace
		{Request{Access: r, Pool: "everton"}, false},
		{Request{Access: r}, false},
	})
	checkCaps(t, "osd", "allow rw pool=p namespace=ns", []capCase{
		{Request{Access: r | w, Pool: "p", Namespace: "ns"}, true},
		{Request{Access: r, Pool: "p", Namespace: ""}, false},
		{Request{Access: r, Pool: "p", Namespace: "ns2"}, false},
		{Request{Access: r, Pool: "q", Namespace: "ns"}, false},
	})
	checkCaps(t, "osd", `allow r pool=p namespace=""`, []capCase{
		{Request{Access: r, Pool: "p", Namespace: ""}, true},
		{Request{Access: r, Pool: "p", Namespace: "x"}, false},
	})
	checkCaps(t, "osd", "allow r namespace=tenant*", []capCase{
		{Request{Access: r, Pool: "p", Namespace: "tenant-1"}, true},
		{Request{Access: r, Pool: "p", Namespace: "other"}, false},
	})
	checkCaps(t, "osd", "allow r object_prefix rbd_children", []capCase{
		{Request{Access: r, Object: "rbd_children.1"}, true},
		{Request{Access: r, Object: "rbd_data.1"}, false},
	})
	// "pool NAME" is accepted as well as "pool=NAME", as Ceph does.
	checkCaps(t, "osd", "allow r pool foo", []capCase{{Request{Access: r, Pool: "foo"}, true}})
}

// Caps: "{capspec}[, {capspec} ...]"; a request is allowed when one
// grant allows all of it.
func TestCapsSeveralGrants(t *testing.T) {
	checkCaps(t, "osd", "allow r, allow rw pool=rbd; allow x pool=cls", []capCase{
		{Request{Access: r, Pool: "other"}, true},
		{Request{Access: w, Pool: "rbd"}, true},
		{Request{Access: w, Pool: "other"}, false},
		{Request{Access: x, Pool: "cls"}, true},
		{Request{Access: r | x, Pool: "cls"}, false}, // r and x come from different grants
	})
}

func TestCapsMonCommands(t *testing.T) {
	checkCaps(t, "mon", `allow r, allow command "osd pool create", allow command 'auth   get'`, []capCase{
		{Request{Command: "osd pool create", Access: w}, true},
		{Request{Command: "auth get"}, true}, // whitespace inside a command is normalised
		{Request{Command: "osd pool delete", Access: w}, false},
		{Request{Command: "osd dump", Access: r}, true}, // read-only commands through allow r
		{Request{Command: "osd pool"}, false},           // exact match, not prefix
	})
}

// Caps, "profile osd (Monitor only)": permissions to connect as an OSD
// to monitors and report status; "allow" implies rw for the MDS.
func TestCapsProfiles(t *testing.T) {
	checkCaps(t, "mon", "profile osd", []capCase{
		{Request{Access: r}, true},
		{Request{Command: "osd boot"}, true},
		{Request{Command: "osd failure"}, true},
		{Request{Command: "pg report"}, true},
		{Request{Command: "pg dump", Access: r}, true},
		{Request{Command: "osd pool create", Access: w}, false},
		{Request{Access: w}, false},
	})
	checkCaps(t, "mon", "profile mon", []capCase{{Request{Command: "anything"}, true}})
	checkCaps(t, "mon", "profile admin", []capCase{{Request{Access: r | w | x}, true}})
	checkCaps(t, "mon", "profile client", []capCase{{Request{Access: r}, true}, {Request{Access: w}, false}})
	checkCaps(t, "osd", "profile client pool=rbd namespace=a", []capCase{
		{Request{Access: r | w | x, Pool: "rbd", Namespace: "a"}, true},
		{Request{Access: r, Pool: "rbd", Namespace: "b"}, false},
		{Request{Access: r, Pool: "other", Namespace: "a"}, false},
	})
	checkCaps(t, "osd", "profile osd", []capCase{{Request{Access: r | w | x, Pool: "p"}, true}})
	checkCaps(t, "mds", "allow", []capCase{
		{Request{Access: r | w, Path: "/x"}, true},
		{Request{Access: AccessSnapshot, Path: "/x"}, false},
	})
	checkCaps(t, "mds", "allow rwps path=/home/a", []capCase{
		{Request{Access: r | w | AccessLayout | AccessSnapshot, Path: "/home/a/f"}, true},
		{Request{Access: r, Path: "/home/a"}, true},
		{Request{Access: r, Path: "/home/ab"}, false}, // whole components only
		{Request{Access: r, Path: "/"}, false},
	})
}

func TestCapsEmptyGrantsNothing(t *testing.T) {
	for _, text := range []string{"", "  "} {
		g, err := ParseCaps("osd", text)
		if err != nil || !g.IsEmpty() || g.Allows(Request{Service: "osd", Access: r}) {
			t.Errorf("ParseCaps(%q) = %v, %v", text, g, err)
		}
	}
	var zero Grants
	if zero.Allows(Request{Service: "", Access: r}) {
		t.Error("zero Grants allow")
	}
}

func TestCapsParseErrors(t *testing.T) {
	for _, tc := range []struct{ service, text, want string }{
		{"nfs", "allow r", "unknown service"},
		{"osd", "allow", "without an access spec"},
		{"osd", "deny r", `starts with "deny"`},
		{"osd", "allow q", `"q" is not an access spec`},
		{"osd", "allow r pool=", "pool needs a value"},
		{"osd", "allow r pool", "pool needs a value"},
		{"osd", "allow r pool=a pool=b", "pool given twice"},
		{"osd", "allow r,", "empty grant"},
		{"osd", "allow r,, allow w", "empty grant"},
		{"osd", `allow r pool="a`, "unterminated"},
		{"osd", "allow r path=/a", "only for mds"},
		{"osd", `allow command "x"`, "only for mon and mgr"},
		{"mon", "allow r pool=a", "only for osd"},
		{"mon", `allow r command "x"`, "takes no access spec"},
		{"mon", "allow class-read", "not an access spec"},
		{"mon", "profile nosuch", `no profile "nosuch"`},
		{"osd", "profile client r", "profile takes only"},
		{"mds", "allow r path=rel", "must be absolute"},
		{"osd", "allow r\x00", "unexpected character"},
		{"osd", strings.Repeat("allow r, ", 600), "limit"},
	} {
		_, err := ParseCaps(tc.service, tc.text)
		if !errors.Is(err, ErrBadCaps) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCaps(%s, %q) = %v, want ErrBadCaps containing %q", tc.service, truncate([]byte(tc.text)), err, tc.want)
		}
	}
}

func TestCapsString(t *testing.T) {
	for _, tc := range []struct{ service, in, want string }{
		{"osd", "allow  rw   pool=rbd", "allow rw pool=rbd"},
		{"osd", "allow all", "allow *"},
		{"osd", "allow wr class-read namespace=''", `allow rw class-read namespace=""`},
		{"osd", "profile client pool = 'my pool'", `profile client pool="my pool"`},
		{"mon", `allow command "say \"hi\""; allow r`, `allow command "say \"hi\"", allow r`},
		{"mds", "allow path=/a/", "allow rw path=/a"},
	} {
		g, err := ParseCaps(tc.service, tc.in)
		if err != nil {
			t.Fatalf("ParseCaps(%q): %v", tc.in, err)
		}
		if got := g.String(); got != tc.want {
			t.Errorf("String of %q = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCapChecker(t *testing.T) {
	var count Counters
	peer := name(t, "client.rbd")
	c, err := NewCapChecker(peer, Caps{"mon": "allow r", "osd": "allow rw pool=rbd"}, count.Events())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(Request{Service: "osd", Access: w, Pool: "rbd"}); err != nil {
		t.Errorf("allowed write refused: %v", err)
	}
	if c.Allows(Request{Service: "mds", Access: r}) {
		t.Error("mds allowed without mds caps")
	}
	err = c.Check(Request{Service: "osd", Access: w, Pool: "data"})
	wantRefusal(t, err, ReasonForbidden, &count)
	if !strings.Contains(err.Error(), "client.rbd") || !strings.Contains(err.Error(), `pool="data"`) {
		t.Errorf("refusal %q does not say who and what", err)
	}
	if _, err := NewCapChecker(peer, Caps{"osd": "allow z"}, Events{}); !errors.Is(err, ErrBadCaps) {
		t.Errorf("bad caps: %v", err)
	}
}

// FuzzParseCaps: the parser never panics, and what it accepts renders to
// canonical text that parses back to the same text and decisions.
func FuzzParseCaps(f *testing.F) {
	for _, s := range []string{"allow *", "allow r, allow rw pool=rbd", `allow rw pool=p namespace="" object_prefix x`,
		"profile osd", "profile client pool=a namespace=b*", `allow command "osd pool create"`, "allow rwps path=/a", "allow"} {
		for _, svc := range []string{"osd", "mon", "mds"} {
			f.Add(svc, s)
		}
	}
	f.Fuzz(func(t *testing.T, service, text string) {
		g, err := ParseCaps(service, text)
		if err != nil {
			return
		}
		g2, err := ParseCaps(service, g.String())
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", g.String(), text, err)
		}
		if g2.String() != g.String() {
			t.Fatalf("canonical text not stable: %q then %q", g.String(), g2.String())
		}
		for _, req := range []Request{{Access: r, Pool: "p"}, {Access: r | w, Pool: "a", Namespace: "b"}, {Command: "osd pool create"}, {Access: r, Path: "/a/b"}} {
			req.Service = service
			if g.Allows(req) != g2.Allows(req) {
				t.Fatalf("%q and its canonical form %q disagree on %s", text, g.String(), req)
			}
		}
	})
}

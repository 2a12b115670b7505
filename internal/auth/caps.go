package auth

import (
	"fmt"
	"strings"
)

// Capabilities, after Ceph's cap grammar (docs/AUTH.md has the full
// grammar with examples). A service's cap text is a list of grants
// separated by ',' or ';'; a request is allowed when any one grant
// allows all of it.

// MaxCapsText bounds one service's cap text.
const MaxCapsText = 4096

// Access is a set of access bits a grant gives or a request needs.
type Access uint8

// Access bits. Exec (x) implies ClassRead and ClassWrite, as in Ceph.
const (
	AccessRead       Access = 1 << iota // r
	AccessWrite                         // w
	AccessExec                          // x: class methods; auth operations on monitors
	AccessClassRead                     // class-read (osd)
	AccessClassWrite                    // class-write (osd)
	AccessLayout                        // p: set layouts and quotas (mds)
	AccessSnapshot                      // s: create and delete snapshots (mds)
	accessAll        = AccessRead | AccessWrite | AccessExec | AccessClassRead | AccessClassWrite | AccessLayout | AccessSnapshot
)

// letters renders the single-letter bits in canonical order.
var accessLetters = []struct {
	bit    Access
	letter byte
}{{AccessRead, 'r'}, {AccessWrite, 'w'}, {AccessExec, 'x'}, {AccessLayout, 'p'}, {AccessSnapshot, 's'}}

// Request is one operation to authorize. Fields a service does not use
// stay empty.
type Request struct {
	Service   string // mon, osd, mds, mgr
	Access    Access // what the operation needs; 0 is never allowed except by '*' or a command grant
	Pool      string // osd: the pool's name
	Namespace string // osd: the object's namespace ("" is the default one)
	Object    string // osd: the object's name, for object_prefix grants
	Command   string // mon, mgr: the command's prefix, e.g. "osd pool create"
	Path      string // mds: the absolute path
}

func (r Request) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Service, r.Access)
	for _, kv := range [][2]string{{"pool", r.Pool}, {"namespace", r.Namespace}, {"object", r.Object},
		{"command", r.Command}, {"path", r.Path}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%q", kv[0], kv[1])
		}
	}
	return b.String()
}

func (a Access) String() string {
	var b []byte
	for _, l := range accessLetters {
		if a&l.bit != 0 {
			b = append(b, l.letter)
		}
	}
	s := string(b)
	for _, c := range []struct {
		bit  Access
		name string
	}{{AccessClassRead, "class-read"}, {AccessClassWrite, "class-write"}} {
		if a&c.bit != 0 {
			s = strings.TrimSpace(s + " " + c.name)
		}
	}
	if s == "" {
		return "none"
	}
	return s
}

// grant is one clause of a cap text.
type grant struct {
	profile      string // "profile NAME": rendered as such, expanded into Grants.flat
	star         bool   // '*' or 'all': everything, including admin commands
	access       Access
	pool         string // "" matches every pool
	namespace    string
	nsSet        bool // namespace restricts; "x*" is a prefix, "*" any
	objectPrefix string
	path         string // mds; "" matches every path
	command      string // mon, mgr: allows exactly this command
}

// Grants are one service's parsed capabilities. The zero value grants
// nothing. Grants are immutable and safe for concurrent use.
type Grants struct {
	service string
	written []grant // as parsed, for String
	flat    []grant // profiles expanded, for Allows
}

// Service is the service the grants were parsed for.
func (g Grants) Service() string { return g.service }

// IsEmpty reports whether g grants nothing.
func (g Grants) IsEmpty() bool { return len(g.flat) == 0 }

// Allows reports whether any grant allows all of req.
func (g Grants) Allows(req Request) bool {
	if req.Service != g.service {
		return false
	}
	for _, gr := range g.flat {
		if gr.allows(req) {
			return true
		}
	}
	return false
}

func (gr *grant) allows(req Request) bool {
	if gr.command != "" {
		return req.Command == gr.command
	}
	switch {
	case gr.pool != "" && req.Pool != gr.pool,
		gr.nsSet && !matchNamespace(gr.namespace, req.Namespace),
		!strings.HasPrefix(req.Object, gr.objectPrefix),
		gr.path != "" && !pathWithin(req.Path, gr.path):
		return false
	case gr.star:
		return true
	case req.Access == 0:
		return false
	}
	have := gr.access
	if have&AccessExec != 0 {
		have |= AccessClassRead | AccessClassWrite
	}
	return req.Access&^have == 0
}

// matchNamespace: "*" matches any namespace, "x*" those starting with x,
// anything else itself only ("" is the default namespace).
func matchNamespace(pattern, ns string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(ns, prefix)
	}
	return ns == pattern
}

// pathWithin reports whether p is dir or below it, by whole components.
func pathWithin(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+"/")
}

// String renders the grants in canonical text; ParseCaps reads it back to
// equal Grants.
func (g Grants) String() string {
	parts := make([]string, len(g.written))
	for i := range g.written {
		parts[i] = g.written[i].String()
	}
	return strings.Join(parts, ", ")
}

func (gr *grant) String() string {
	var b strings.Builder
	switch {
	case gr.profile != "":
		b.WriteString("profile " + quoteCapValue(gr.profile))
	case gr.command != "":
		return "allow command " + quoteAlways(gr.command)
	case gr.star:
		b.WriteString("allow *")
	default:
		b.WriteString("allow " + gr.access.String())
	}
	if gr.pool != "" {
		b.WriteString(" pool=" + quoteCapValue(gr.pool))
	}
	if gr.nsSet {
		b.WriteString(" namespace=" + quoteCapValue(gr.namespace))
	}
	if gr.objectPrefix != "" {
		b.WriteString(" object_prefix " + quoteCapValue(gr.objectPrefix))
	}
	if gr.path != "" {
		b.WriteString(" path=" + quoteCapValue(gr.path))
	}
	return b.String()
}

func quoteAlways(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

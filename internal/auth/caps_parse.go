package auth

import (
	"fmt"
	"strings"
)

// capServices are the services caps are written for.
func isCapService(s string) bool {
	return s == "mon" || s == "osd" || s == "mds" || s == "mgr"
}

// ParseCaps parses one service's cap text ("allow r, allow rw pool=rbd").
// Empty or blank text grants nothing. Errors wrap ErrBadCaps and give the
// offending token's offset.
func ParseCaps(service, text string) (Grants, error) {
	g, err := parseCaps(service, text)
	if err != nil {
		return Grants{}, fmt.Errorf("%w: %s %q: %w", ErrBadCaps, service, truncate([]byte(text)), err)
	}
	return g, nil
}

func parseCaps(service, text string) (Grants, error) {
	if !isCapService(service) {
		return Grants{}, fmt.Errorf("unknown service (want mon, osd, mds or mgr)")
	}
	if len(text) > MaxCapsText {
		return Grants{}, fmt.Errorf("%d bytes, limit %d", len(text), MaxCapsText)
	}
	toks, err := lexCaps(text)
	if err != nil {
		return Grants{}, err
	}
	g := Grants{service: service}
	for len(toks) > 0 {
		end := 0
		for end < len(toks) && toks[end].kind != tokSep {
			end++
		}
		if end == 0 {
			return Grants{}, fmt.Errorf("offset %d: empty grant", toks[0].pos)
		}
		gr, flat, err := parseGrant(service, toks[:end])
		if err != nil {
			return Grants{}, err
		}
		g.written = append(g.written, gr)
		g.flat = append(g.flat, flat...)
		if toks = toks[end:]; len(toks) > 0 {
			if toks = toks[1:]; len(toks) == 0 {
				return Grants{}, fmt.Errorf("empty grant after the last separator")
			}
		}
	}
	return g, nil
}

// parseGrant parses "allow ..." or "profile NAME ..." and returns the
// grant as written and its expansion.
func parseGrant(service string, toks []token) (grant, []grant, error) {
	switch head := toks[0]; {
	case head.kind == tokWord && head.text == "allow":
		gr, err := parseAllow(service, toks[1:], head.pos)
		return gr, []grant{gr}, err
	case head.kind == tokWord && head.text == "profile":
		return parseProfile(service, toks[1:], head.pos)
	default:
		return grant{}, nil, fmt.Errorf("offset %d: grant starts with %q, want allow or profile", head.pos, head.text)
	}
}

// parseAllow parses what follows "allow": access words and match clauses,
// in any order.
func parseAllow(service string, toks []token, pos int) (grant, error) {
	var gr grant
	seen := map[string]bool{}
	for i := 0; i < len(toks); {
		t := toks[i]
		if t.kind != tokWord {
			return gr, fmt.Errorf("offset %d: unexpected %q", t.pos, t.text)
		}
		if isClause(t.text) {
			if seen[t.text] {
				return gr, fmt.Errorf("offset %d: %s given twice", t.pos, t.text)
			}
			seen[t.text] = true
			v, n, err := clauseValue(toks[i+1:], t)
			if err != nil {
				return gr, err
			}
			if err := gr.setClause(service, t, v); err != nil {
				return gr, err
			}
			i += 1 + n
			continue
		}
		acc, star, ok := parseAccess(service, t.text)
		if !ok {
			return gr, fmt.Errorf("offset %d: %q is not an access spec or match clause for %s caps", t.pos, t.text, service)
		}
		gr.access |= acc
		gr.star = gr.star || star
		i++
	}
	return gr, gr.validate(service, pos)
}

func isClause(w string) bool {
	switch w {
	case "pool", "namespace", "object_prefix", "path", "command":
		return true
	}
	return false
}

// clauseValue reads "= VALUE" or "VALUE" after a clause keyword and
// returns the value and the tokens used.
func clauseValue(toks []token, key token) (string, int, error) {
	n := 0
	if len(toks) > 0 && toks[0].kind == tokEquals {
		n = 1
	}
	if len(toks) <= n || (toks[n].kind != tokWord && toks[n].kind != tokQuoted) {
		return "", 0, fmt.Errorf("offset %d: %s needs a value", key.pos, key.text)
	}
	return toks[n].text, n + 1, nil
}

// setClause records a match clause, checking the service may use it.
func (gr *grant) setClause(service string, key token, v string) error {
	bad := func(why string) error { return fmt.Errorf("offset %d: %s: %s", key.pos, key.text, why) }
	switch key.text {
	case "pool", "namespace", "object_prefix":
		if service != "osd" {
			return bad("only for osd caps")
		}
	case "path":
		if service != "mds" {
			return bad("only for mds caps")
		}
	case "command":
		if service != "mon" && service != "mgr" {
			return bad("only for mon and mgr caps")
		}
	}
	switch key.text {
	case "pool":
		if v == "" {
			return bad("empty pool name")
		}
		gr.pool = v
	case "namespace":
		gr.namespace, gr.nsSet = v, true
	case "object_prefix":
		if v == "" {
			return bad("empty prefix")
		}
		gr.objectPrefix = v
	case "path":
		if !strings.HasPrefix(v, "/") {
			return bad("must be absolute")
		}
		if v != "/" {
			v = strings.TrimRight(v, "/")
		}
		gr.path = v
	case "command":
		if strings.TrimSpace(v) == "" {
			return bad("empty command")
		}
		gr.command = strings.Join(strings.Fields(v), " ")
	}
	return nil
}

// parseAccess parses an access word for service.
func parseAccess(service, w string) (acc Access, star, ok bool) {
	switch w {
	case "*", "all":
		return accessAll, true, true
	case "class-read":
		return AccessClassRead, false, service == "osd"
	case "class-write":
		return AccessClassWrite, false, service == "osd"
	}
	letters := "rwx"
	if service == "mds" {
		letters = "rwxps"
	}
	for i := 0; i < len(w); i++ {
		j := strings.IndexByte(letters, w[i])
		if j < 0 {
			return 0, false, false
		}
		for _, l := range accessLetters {
			if l.letter == w[i] {
				acc |= l.bit
			}
		}
	}
	return acc, false, w != ""
}

// validate checks a parsed "allow" grant as a whole.
func (gr *grant) validate(service string, pos int) error {
	switch {
	case gr.command != "" && (gr.access != 0 || gr.star):
		return fmt.Errorf("offset %d: a command grant takes no access spec", pos)
	case gr.command != "":
		return nil
	case gr.access == 0 && service == "mds":
		gr.access = AccessRead | AccessWrite // bare "allow" is rw for the mds, as in Ceph
		return nil
	case gr.access == 0:
		return fmt.Errorf("offset %d: allow without an access spec", pos)
	}
	if gr.star {
		gr.access = accessAll
	}
	return nil
}

// parseProfile parses what follows "profile" and expands it.
func parseProfile(service string, toks []token, pos int) (grant, []grant, error) {
	if len(toks) == 0 || toks[0].kind != tokWord {
		return grant{}, nil, fmt.Errorf("offset %d: profile needs a name", pos)
	}
	name := toks[0].text
	text, ok := profileText(service, name)
	if !ok {
		return grant{}, nil, fmt.Errorf("offset %d: no profile %q for %s caps", toks[0].pos, name, service)
	}
	// Restrictions after the name, e.g. "profile client pool=rbd".
	var restrict grant
	seen := map[string]bool{}
	for i := 1; i < len(toks); {
		t := toks[i]
		if t.kind != tokWord || (t.text != "pool" && t.text != "namespace" && t.text != "object_prefix") {
			return grant{}, nil, fmt.Errorf("offset %d: profile takes only pool, namespace and object_prefix, not %q", t.pos, t.text)
		}
		if seen[t.text] {
			return grant{}, nil, fmt.Errorf("offset %d: %s given twice", t.pos, t.text)
		}
		seen[t.text] = true
		v, n, err := clauseValue(toks[i+1:], t)
		if err != nil {
			return grant{}, nil, err
		}
		if err := restrict.setClause(service, t, v); err != nil {
			return grant{}, nil, err
		}
		i += 1 + n
	}
	exp, err := parseCaps(service, text)
	if err != nil {
		return grant{}, nil, fmt.Errorf("profile %s: %w", name, err) // a bug in profileText
	}
	for i := range exp.flat {
		f := &exp.flat[i]
		if f.command == "" {
			f.pool, f.namespace, f.nsSet, f.objectPrefix = restrict.pool, restrict.namespace, restrict.nsSet, restrict.objectPrefix
		}
	}
	restrict.profile = name
	return restrict, exp.flat, nil
}

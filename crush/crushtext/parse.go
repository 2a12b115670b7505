package crushtext

import "github.com/cuttlestore/cuttle/crush"

// Parse compiles Ceph's text form into a Spec, for callers that want to
// edit a map before building it. It checks everything crushtool -c checks
// (and a little more, see the package tests), so crush.New accepts the
// result except for the rare errors only the built map can reveal (see
// Compile). Every error is a *SyntaxError.
func Parse(src []byte) (crush.Spec, error) {
	p, err := parse(src)
	if err != nil {
		return crush.Spec{}, err
	}
	return p.spec, nil
}

// Compile is Parse followed by crush.New. An error from crush.New (say, a
// uniform bucket whose device-class shadow would have unequal weights) is
// reported at the first rule, where Ceph builds the shadow trees, with the
// builder's error as SyntaxError.Err.
func Compile(src []byte) (*crush.Map, error) {
	p, err := parse(src)
	if err != nil {
		return nil, err
	}
	m, err := crush.New(p.spec)
	if err != nil {
		at := p.toks[len(p.toks)-1]
		if p.firstRule != nil {
			at = *p.firstRule
		}
		return nil, &SyntaxError{Line: at.line, Column: at.col, Msg: err.Error(), Err: err}
	}
	return m, nil
}

// maxID bounds device ids and bucket ids (in absolute value) as crush.New
// does; checking here reports the offending token.
const maxID = 1<<24 - 1

// maxRuleID is the highest rule id: Ceph keeps at most 256 rules and stores
// the id again in an 8-bit field.
const maxRuleID = 255

// Sections of a map, in the order Ceph's grammar requires them.
const (
	sectionHeader     = iota // tunables, devices and types
	sectionBuckets           // buckets, then rules
	sectionChooseArgs        // choose_args
)

// parser holds the state of one compilation: the Spec being built and the
// name tables Ceph's CrushCompiler keeps.
type parser struct {
	toks    []token
	pos     int
	spec    crush.Spec
	section int

	types     map[string]int32
	typeIDs   map[int32]bool
	items     map[string]int32 // device and bucket names
	devClass  map[int32]string // device id -> class, for shadow sizes
	classes   map[string]bool  // classes some device has
	buckets   map[int32]int    // bucket id -> index in spec.Buckets
	weights   map[int32]uint32 // bucket id -> total weight
	shadows   map[int32]shadowRef
	usedIDs   map[int32]string // bucket and shadow ids -> who holds them
	reserved  map[int32]bool   // every bucket id written anywhere
	ruleNames map[string]bool
	ruleIDs   map[int32]bool
	firstRule *token
}

// shadowRef names the shadow bucket an "id -N class C" line fixes.
type shadowRef struct {
	bucket int32
	class  string
}

func parse(src []byte) (*parser, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{
		toks:      toks,
		spec:      crush.Spec{Tunables: crush.LegacyTunables()},
		types:     map[string]int32{},
		typeIDs:   map[int32]bool{},
		items:     map[string]int32{},
		devClass:  map[int32]string{},
		classes:   map[string]bool{},
		buckets:   map[int32]int{},
		weights:   map[int32]uint32{},
		shadows:   map[int32]shadowRef{},
		usedIDs:   map[int32]string{},
		reserved:  reservedIDs(toks),
		ruleNames: map[string]bool{},
		ruleIDs:   map[int32]bool{},
	}
	if err := p.parseMap(); err != nil {
		return nil, err
	}
	return p, nil
}

// reservedIDs collects every "id -N" in the text, so that a bucket without
// an id line gets one no other bucket claims, even a later one (Ceph's
// find_used_bucket_ids).
func reservedIDs(toks []token) map[int32]bool {
	ids := map[int32]bool{}
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].kind == tokWord && toks[i].text == "id" {
			if v, err := parseInt(toks[i+1].text, -maxID, -1); err == nil {
				ids[int32(v)] = true
			}
		}
	}
	return ids
}

// parseMap parses the statements in order: tunables, devices and types
// first, then buckets and rules, then choose_args, as Ceph's grammar
// requires.
func (p *parser) parseMap() error {
	for {
		t := p.peek()
		if t.kind == tokEOF {
			return nil
		}
		if t.kind != tokWord {
			return errorAt(t, "expected tunable, device, type, a bucket, rule or choose_args; found %s", t)
		}
		if err := p.parseStatement(t); err != nil {
			return err
		}
	}
}

func (p *parser) parseStatement(t token) error {
	switch t.text {
	case "tunable", "device", "type":
		if p.section != sectionHeader {
			return errorAt(t, "%s lines must come before buckets, rules and choose_args", t.text)
		}
		switch t.text {
		case "tunable":
			return p.parseTunable()
		case "device":
			return p.parseDevice()
		}
		return p.parseType()
	case "rule":
		if p.section > sectionBuckets {
			return errorAt(t, "rules must come before choose_args")
		}
		p.section = sectionBuckets
		return p.parseRule()
	case "choose_args":
		p.section = sectionChooseArgs
		return p.parseChooseArgs()
	}
	switch {
	case p.section > sectionBuckets:
		return errorAt(t, "buckets must come before choose_args")
	case p.firstRule != nil:
		return errorAt(t, "buckets must be defined before rules")
	}
	p.section = sectionBuckets
	return p.parseBucket()
}

func (p *parser) peek() token { return p.toks[p.pos] }

// peekWord reports whether the next token is the word w.
func (p *parser) peekWord(w string) bool {
	t := p.toks[p.pos]
	return t.kind == tokWord && t.text == w
}

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

// expect consumes a token of the given kind; what describes it for the
// error message.
func (p *parser) expect(kind tokenKind, what string) (token, error) {
	t := p.next()
	if t.kind != kind {
		return t, errorAt(t, "expected %s, found %s", what, t)
	}
	return t, nil
}

// keyword consumes the word kw.
func (p *parser) keyword(kw string) (token, error) {
	t := p.next()
	if t.kind != tokWord || t.text != kw {
		return t, errorAt(t, "expected %q, found %s", kw, t)
	}
	return t, nil
}

// name consumes a CRUSH name; what says what it names.
func (p *parser) name(what string) (token, error) {
	t, err := p.expect(tokWord, what)
	if err != nil {
		return t, err
	}
	if !validName(t.text) {
		return t, errorAt(t, "invalid %s %q: names may hold only letters, digits, '-', '_' and '.'", what, t.text)
	}
	return t, nil
}

// integer consumes a decimal integer in [lo, hi].
func (p *parser) integer(what string, lo, hi int64) (int64, token, error) {
	t, err := p.expect(tokWord, what)
	if err != nil {
		return 0, t, err
	}
	v, err := parseInt(t.text, lo, hi)
	switch err {
	case errSyntax:
		return 0, t, errorAt(t, "expected %s, found %s", what, t)
	case errRange:
		return 0, t, errorAt(t, "%s %s out of range [%d, %d]", what, t.text, lo, hi)
	}
	return v, t, nil
}

// weight consumes a weight and converts it as Ceph does (ParseWeight).
func (p *parser) weight() (uint32, token, error) {
	t, err := p.expect(tokWord, "a weight")
	if err != nil {
		return 0, t, err
	}
	w, err := ParseWeight(t.text)
	switch err {
	case errSyntax:
		return 0, t, errorAt(t, "expected a weight, found %s", t)
	case errRange:
		return 0, t, errorAt(t, "weight %s out of range", t.text)
	}
	return w, t, nil
}

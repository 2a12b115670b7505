package crushtext

import (
	"math"

	"github.com/cuttlestore/cuttle/crush"
)

// Rule sizes when a map leaves them out, as maps printed by Ceph 17 and
// later do (those releases dropped min_size and max_size).
const (
	defaultMinSize = 1
	defaultMaxSize = 100
)

// parseRule parses
//
//	rule [NAME] {
//		id|ruleset N
//		type replicated|erasure|N
//		[min_size N]
//		[max_size N]
//		step ...
//	}
func (p *parser) parseRule() error {
	ruleTok := p.next()
	if p.firstRule == nil {
		p.firstRule = &ruleTok
	}
	r := crush.Rule{MinSize: defaultMinSize, MaxSize: defaultMaxSize}
	if !p.peekIs(tokLBrace) {
		nameTok, err := p.name("rule name")
		if err != nil {
			return err
		}
		r.Name = nameTok.text
	}
	if p.ruleNames[r.Name] {
		return errorAt(ruleTok, "rule name '%s' already defined", r.Name)
	}
	if _, err := p.expect(tokLBrace, "'{'"); err != nil {
		return err
	}
	if err := p.parseRuleHeader(&r); err != nil {
		return err
	}
	for !p.peekIs(tokRBrace) {
		step, err := p.parseStep(r.Name)
		if err != nil {
			return err
		}
		r.Steps = append(r.Steps, step)
	}
	closeTok := p.next()
	if len(r.Steps) == 0 {
		return errorAt(closeTok, "rule '%s' has no steps", r.Name)
	}
	p.ruleNames[r.Name] = true
	p.ruleIDs[r.ID] = true
	p.spec.Rules = append(p.spec.Rules, r)
	return nil
}

func (p *parser) parseRuleHeader(r *crush.Rule) error {
	t, err := p.expect(tokWord, "\"id\"")
	if err != nil {
		return err
	}
	if t.text != "id" && t.text != "ruleset" {
		return errorAt(t, "expected \"id\", found %s", t)
	}
	id, idTok, err := p.integer("a rule id", 0, maxRuleID)
	if err != nil {
		return err
	}
	if p.ruleIDs[int32(id)] {
		return errorAt(idTok, "rule %d already exists", id)
	}
	r.ID = int32(id)
	if _, err := p.keyword("type"); err != nil {
		return err
	}
	if r.Type, err = p.ruleType(); err != nil {
		return err
	}
	// The rule mask stores the sizes in 8 bits.
	if p.peekWord("min_size") {
		p.next()
		v, _, err := p.integer("min_size", 0, math.MaxUint8)
		if err != nil {
			return err
		}
		r.MinSize = int32(v)
	}
	if p.peekWord("max_size") {
		p.next()
		v, _, err := p.integer("max_size", 0, math.MaxUint8)
		if err != nil {
			return err
		}
		r.MaxSize = int32(v)
	}
	return nil
}

func (p *parser) ruleType() (crush.RuleType, error) {
	switch {
	case p.peekWord("replicated"):
		p.next()
		return crush.RuleReplicated, nil
	case p.peekWord("erasure"):
		p.next()
		return crush.RuleErasure, nil
	}
	v, _, err := p.integer("a rule type (replicated, erasure or a number)", 0, math.MaxUint8)
	return crush.RuleType(v), err
}

// setSteps maps the set_* step keywords to their ops.
func setStepOp(kw string) (crush.Op, bool) {
	switch kw {
	case "set_choose_tries":
		return crush.OpSetChooseTries, true
	case "set_chooseleaf_tries":
		return crush.OpSetChooseLeafTries, true
	case "set_choose_local_tries":
		return crush.OpSetChooseLocalTries, true
	case "set_choose_local_fallback_tries":
		return crush.OpSetChooseLocalFallbackTries, true
	case "set_chooseleaf_vary_r":
		return crush.OpSetChooseLeafVaryR, true
	case "set_chooseleaf_stable":
		return crush.OpSetChooseLeafStable, true
	}
	return 0, false
}

func (p *parser) parseStep(rule string) (crush.Step, error) {
	if _, err := p.keyword("step"); err != nil {
		return crush.Step{}, err
	}
	t, err := p.expect(tokWord, "a step")
	if err != nil {
		return crush.Step{}, err
	}
	if op, ok := setStepOp(t.text); ok {
		v, _, err := p.integer(t.text+" value", 0, math.MaxInt32)
		return crush.Step{Op: op, Arg1: int32(v)}, err
	}
	switch t.text {
	case "take":
		return p.parseTake(rule)
	case "choose", "chooseleaf":
		return p.parseChoose(rule, t.text == "chooseleaf")
	case "emit":
		return crush.Step{Op: crush.OpEmit}, nil
	}
	return crush.Step{}, errorAt(t, "unknown step %s", t)
}

// parseTake parses "take NAME [class CLASS]". With a class the step takes
// the bucket's shadow for that class; crush.New resolves the id.
func (p *parser) parseTake(rule string) (crush.Step, error) {
	nameTok, err := p.name("item name")
	if err != nil {
		return crush.Step{}, err
	}
	id, ok := p.items[nameTok.text]
	if !ok {
		return crush.Step{}, errorAt(nameTok, "in rule '%s' item '%s' not defined", rule, nameTok.text)
	}
	step := crush.Step{Op: crush.OpTake, Arg1: id}
	if !p.peekWord("class") {
		return step, nil
	}
	p.next()
	classTok, err := p.name("device class")
	if err != nil {
		return crush.Step{}, err
	}
	switch {
	case id >= 0:
		return crush.Step{}, errorAt(nameTok, "in rule '%s' step take %s has no class information", rule, nameTok.text)
	case !p.classes[classTok.text]:
		return crush.Step{}, errorAt(classTok, "in rule '%s' step take %s: no device has class %s", rule, nameTok.text, classTok.text)
	}
	step.Class = classTok.text
	return step, nil
}

// parseChoose parses "choose|chooseleaf firstn|indep N type TYPE".
func (p *parser) parseChoose(rule string, leaf bool) (crush.Step, error) {
	modeTok, err := p.expect(tokWord, "firstn or indep")
	if err != nil {
		return crush.Step{}, err
	}
	var op crush.Op
	switch {
	case modeTok.text == "firstn" && leaf:
		op = crush.OpChooseLeafFirstN
	case modeTok.text == "firstn":
		op = crush.OpChooseFirstN
	case modeTok.text == "indep" && leaf:
		op = crush.OpChooseLeafIndep
	case modeTok.text == "indep":
		op = crush.OpChooseIndep
	default:
		return crush.Step{}, errorAt(modeTok, "expected firstn or indep, found %s", modeTok)
	}
	n, _, err := p.integer("a count", math.MinInt32, math.MaxInt32)
	if err != nil {
		return crush.Step{}, err
	}
	if _, err := p.keyword("type"); err != nil {
		return crush.Step{}, err
	}
	typeTok, err := p.name("type name")
	if err != nil {
		return crush.Step{}, err
	}
	typeID, ok := p.types[typeTok.text]
	if !ok {
		return crush.Step{}, errorAt(typeTok, "in rule '%s' type '%s' not defined", rule, typeTok.text)
	}
	return crush.Step{Op: op, Arg1: int32(n), Arg2: typeID}, nil
}

package crushtext

import (
	"math"

	"github.com/cuttlestore/cuttle/crush"
)

// parseChooseArgs parses
//
//	choose_args INDEX {
//		{ bucket_id -N [weight_set [ [ w ... ] ... ]] [ids [ n ... ]] }
//		...
//	}
//
// Sizes are checked against the bucket, as Ceph does. Overrides for buckets
// that are not straw2 are dropped: only straw2 uses them, and Ceph strips
// them too (CrushWrapper::update_choose_args), so they vanish from the
// decompiled text.
func (p *parser) parseChooseArgs() error {
	p.next()
	idxTok, err := p.expect(tokWord, "a choose_args index")
	if err != nil {
		return err
	}
	index, err := parseChooseArgsIndex(idxTok.text)
	if err != nil {
		return errorAt(idxTok, "expected a choose_args index, found %s", idxTok)
	}
	if _, dup := p.spec.ChooseArgs[index]; dup {
		return errorAt(idxTok, "choose_args %s duplicated", idxTok.text)
	}
	if _, err := p.expect(tokLBrace, "'{'"); err != nil {
		return err
	}
	var args []crush.ChooseArg
	seen := map[int32]bool{}
	for !p.peekIs(tokRBrace) {
		arg, alg, err := p.parseChooseArg(seen)
		if err != nil {
			return err
		}
		if alg == crush.AlgStraw2 && (arg.IDs != nil || arg.Weights != nil) {
			args = append(args, arg)
		}
	}
	p.next()
	if p.spec.ChooseArgs == nil {
		p.spec.ChooseArgs = map[int64][]crush.ChooseArg{}
	}
	p.spec.ChooseArgs[index] = args
	return nil
}

// parseChooseArg parses one "{ bucket_id ... }" block and returns it with
// the bucket's algorithm.
func (p *parser) parseChooseArg(seen map[int32]bool) (crush.ChooseArg, crush.Alg, error) {
	var arg crush.ChooseArg
	if _, err := p.expect(tokLBrace, "'{' or '}'"); err != nil {
		return arg, 0, err
	}
	if _, err := p.keyword("bucket_id"); err != nil {
		return arg, 0, err
	}
	v, idTok, err := p.integer("a bucket id", -maxID, -1)
	if err != nil {
		return arg, 0, err
	}
	arg.BucketID = int32(v)
	size, alg, ok := p.chooseArgTarget(arg.BucketID)
	switch {
	case !ok:
		return arg, 0, errorAt(idTok, "bucket %d does not exist", v)
	case seen[arg.BucketID]:
		return arg, 0, errorAt(idTok, "bucket %d appears twice in this choose_args", v)
	}
	seen[arg.BucketID] = true
	var hasWeights, hasIDs bool
	for !p.peekIs(tokRBrace) {
		t, err := p.expect(tokWord, "weight_set, ids or '}'")
		if err != nil {
			return arg, 0, err
		}
		switch {
		case t.text == "weight_set" && !hasWeights:
			arg.Weights, err = p.parseWeightSet(arg.BucketID, size)
			hasWeights = true
		case t.text == "ids" && !hasIDs:
			arg.IDs, err = p.parseIDs(arg.BucketID, size)
			hasIDs = true
		default:
			err = errorAt(t, "expected weight_set, ids or '}', found %s", t)
		}
		if err != nil {
			return arg, 0, err
		}
	}
	p.next()
	return arg, alg, nil
}

// chooseArgTarget returns the size and algorithm of the bucket a choose_arg
// names: a bucket, or a device-class shadow bucket whose id the text fixes.
// Shadow buckets exist once a rule has been parsed (Ceph builds them at the
// first rule) and only for classes some device has.
func (p *parser) chooseArgTarget(id int32) (int, crush.Alg, bool) {
	if i, ok := p.buckets[id]; ok {
		b := &p.spec.Buckets[i]
		return len(b.Items), b.Alg, true
	}
	ref, ok := p.shadows[id]
	if !ok || p.firstRule == nil || !p.classes[ref.class] {
		return 0, 0, false
	}
	orig := &p.spec.Buckets[p.buckets[ref.bucket]]
	size := 0
	for _, item := range orig.Items {
		// Every bucket item has a shadow (perhaps empty); devices stay
		// only if they have the class.
		if item < 0 || p.devClass[item] == ref.class {
			size++
		}
	}
	return size, orig.Alg, true
}

// parseWeightSet parses "[ [ w ... ] ... ]" after "weight_set". An empty
// set means no weight set, as in Ceph.
func (p *parser) parseWeightSet(bucket int32, size int) ([][]uint32, error) {
	if _, err := p.expect(tokLBracket, "'['"); err != nil {
		return nil, err
	}
	var sets [][]uint32
	for !p.peekIs(tokRBracket) {
		open, err := p.expect(tokLBracket, "'[' or ']'")
		if err != nil {
			return nil, err
		}
		ws := make([]uint32, 0, size)
		for !p.peekIs(tokRBracket) {
			w, _, err := p.weight()
			if err != nil {
				return nil, err
			}
			ws = append(ws, w)
		}
		p.next()
		if len(ws) != size {
			return nil, errorAt(open, "bucket %d needs exactly %d weights but got %d", bucket, size, len(ws))
		}
		sets = append(sets, ws)
	}
	p.next()
	return sets, nil
}

// parseIDs parses "[ n ... ]" after "ids". An empty list means no ids.
func (p *parser) parseIDs(bucket int32, size int) ([]int32, error) {
	open, err := p.expect(tokLBracket, "'['")
	if err != nil {
		return nil, err
	}
	var ids []int32
	for !p.peekIs(tokRBracket) {
		v, _, err := p.integer("an id", math.MinInt32, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		ids = append(ids, int32(v))
	}
	p.next()
	if len(ids) != size {
		return nil, errorAt(open, "bucket %d needs exactly %d ids but got %d", bucket, size, len(ids))
	}
	return ids, nil
}

package crushtext

import (
	"fmt"
	"math"

	"github.com/cuttlestore/cuttle/crush"
)

// Ceph's limits on a single item weight given in the text
// (CRUSH_MAX_DEVICE_WEIGHT, CRUSH_MAX_BUCKET_WEIGHT).
const (
	maxDeviceWeight = 100 * crush.WeightOne
	maxBucketWeight = 65535 * crush.WeightOne
)

// bucketDraft collects a bucket's lines before its items are placed.
type bucketDraft struct {
	nameTok token
	b       crush.Bucket
	hasID   bool
	hasAlg  bool
	hasHash bool
	items   []itemLine
	total   uint32 // sum of the item weights
}

// itemLine is one "item NAME [weight W] [pos P]" line.
type itemLine struct {
	nameTok token
	id      int32
	weight  uint32
	pos     int // -1 when not given
	posTok  token
}

// parseBucket parses "TYPE NAME { id ... alg ... hash ... item ... }". The
// lines may come in any order, as in Ceph.
func (p *parser) parseBucket() error {
	typeTok := p.next()
	typeID, ok := p.types[typeTok.text]
	if !ok {
		return errorAt(typeTok, "bucket type '%s' is not defined", typeTok.text)
	}
	nameTok, err := p.name("bucket name")
	if err != nil {
		return err
	}
	if _, dup := p.items[nameTok.text]; dup {
		return errorAt(nameTok, "bucket or device '%s' is already defined", nameTok.text)
	}
	if _, err := p.expect(tokLBrace, "'{'"); err != nil {
		return err
	}
	d := &bucketDraft{nameTok: nameTok, b: crush.Bucket{Name: nameTok.text, Type: typeID}}
	for !p.peekIs(tokRBrace) {
		if err := p.parseBucketLine(d); err != nil {
			return err
		}
	}
	closeTok := p.next()
	if !d.hasAlg {
		return errorAt(closeTok, "bucket '%s' has no alg line", d.b.Name)
	}
	if err := p.placeItems(d); err != nil {
		return err
	}
	p.addBucket(d)
	return nil
}

func (p *parser) peekIs(kind tokenKind) bool { return p.toks[p.pos].kind == kind }

func (p *parser) parseBucketLine(d *bucketDraft) error {
	t, err := p.expect(tokWord, "id, alg, hash, item or '}'")
	if err != nil {
		return err
	}
	switch t.text {
	case "id":
		return p.parseBucketID(d, t)
	case "alg":
		return p.parseAlg(d, t)
	case "hash":
		return p.parseHash(d, t)
	case "item":
		return p.parseItem(d)
	}
	return errorAt(t, "expected id, alg, hash, item or '}' in bucket '%s', found %s", d.b.Name, t)
}

// parseBucketID parses "id -N" (the bucket's id) or "id -N class C" (the
// id of its shadow bucket for device class C).
func (p *parser) parseBucketID(d *bucketDraft, t token) error {
	v, idTok, err := p.integer("a negative bucket id", -maxID, -1)
	if err != nil {
		return err
	}
	id := int32(v)
	if !p.peekWord("class") {
		if d.hasID {
			return errorAt(t, "bucket '%s' has two ids", d.b.Name)
		}
		if err := p.claimID(idTok, id, fmt.Sprintf("bucket '%s'", d.b.Name)); err != nil {
			return err
		}
		d.b.ID, d.hasID = id, true
		return nil
	}
	p.next()
	classTok, err := p.name("device class")
	if err != nil {
		return err
	}
	class := classTok.text
	if _, dup := d.b.ClassIDs[class]; dup {
		return errorAt(classTok, "duplicate device class %s for bucket %s", class, d.b.Name)
	}
	if err := p.claimID(idTok, id, fmt.Sprintf("the %s shadow of bucket '%s'", class, d.b.Name)); err != nil {
		return err
	}
	if d.b.ClassIDs == nil {
		d.b.ClassIDs = map[string]int32{}
	}
	d.b.ClassIDs[class] = id
	return nil
}

// claimID records that id is taken; bucket ids and shadow ids share one
// space.
func (p *parser) claimID(t token, id int32, who string) error {
	if other, dup := p.usedIDs[id]; dup {
		return errorAt(t, "id %d is already used by %s", id, other)
	}
	p.usedIDs[id] = who
	return nil
}

func (p *parser) parseAlg(d *bucketDraft, t token) error {
	algTok, err := p.expect(tokWord, "a bucket algorithm")
	if err != nil {
		return err
	}
	if d.hasAlg {
		return errorAt(t, "bucket '%s' has two alg lines", d.b.Name)
	}
	alg, err := crush.ParseAlg(algTok.text)
	if err != nil {
		return errorAt(algTok, "unknown bucket alg '%s'", algTok.text)
	}
	d.b.Alg, d.hasAlg = alg, true
	return nil
}

// parseHash accepts "hash 0" and "hash rjenkins1", the only hash CRUSH has.
func (p *parser) parseHash(d *bucketDraft, t token) error {
	hashTok, err := p.expect(tokWord, "a hash")
	if err != nil {
		return err
	}
	if d.hasHash {
		return errorAt(t, "bucket '%s' has two hash lines", d.b.Name)
	}
	if hashTok.text != "rjenkins1" {
		if v, err := parseInt(hashTok.text, 0, 0); err != nil || v != crush.HashRjenkins1 {
			return errorAt(hashTok, "unknown hash '%s' (only 0, rjenkins1, is defined)", hashTok.text)
		}
	}
	d.b.Hash, d.hasHash = crush.HashRjenkins1, true
	return nil
}

// parseItem parses "item NAME [weight W] [pos P]". A device's weight
// defaults to 1.0 and a bucket's to the bucket's total weight; a weight
// given here overrides either.
func (p *parser) parseItem(d *bucketDraft) error {
	nameTok, err := p.name("item name")
	if err != nil {
		return err
	}
	id, ok := p.items[nameTok.text]
	if !ok {
		return errorAt(nameTok, "item '%s' in bucket '%s' is not defined", nameTok.text, d.b.Name)
	}
	it := itemLine{nameTok: nameTok, id: id, weight: crush.WeightOne, pos: -1}
	if id < 0 {
		it.weight = p.weights[id]
	}
	for hasWeight := false; ; {
		switch {
		case p.peekWord("weight") && !hasWeight:
			p.next()
			w, wTok, err := p.weight()
			if err != nil {
				return err
			}
			if err := checkItemWeight(wTok, id, w); err != nil {
				return err
			}
			it.weight, hasWeight = w, true
		case p.peekWord("pos") && it.pos < 0:
			p.next()
			pos, posTok, err := p.integer("a position", 0, math.MaxInt32)
			if err != nil {
				return err
			}
			it.pos, it.posTok = int(pos), posTok
		default:
			// Ceph checks only explicit weights, but decompiling prints
			// the default explicitly, so check it too or the printed map
			// would not compile back.
			if !hasWeight && id < 0 && it.weight > maxBucketWeight {
				return errorAt(nameTok, "item '%s' weighs %s, more than a bucket item may (65535)", nameTok.text, plainWeight(it.weight))
			}
			d.items = append(d.items, it)
			return nil
		}
	}
}

func checkItemWeight(t token, id int32, w uint32) error {
	switch {
	case id >= 0 && w > maxDeviceWeight:
		return errorAt(t, "device weight limited to %d", maxDeviceWeight/crush.WeightOne)
	case id < 0 && w > maxBucketWeight:
		return errorAt(t, "bucket weight limited to %d to prevent overflow", maxBucketWeight/crush.WeightOne)
	}
	return nil
}

// placeItems orders the items as Ceph does: an item with "pos P" goes to
// slot P, the others fill the free slots in the order they are written.
// It also checks uniform weights and the total for overflow.
func (p *parser) placeItems(d *bucketDraft) error {
	size := len(d.items)
	used := make([]bool, size)
	for _, it := range d.items {
		if it.pos < 0 {
			continue
		}
		if it.pos >= size {
			return errorAt(it.posTok, "item '%s' in bucket '%s' has pos %d >= size %d", it.nameTok.text, d.b.Name, it.pos, size)
		}
		if used[it.pos] {
			return errorAt(it.posTok, "item '%s' in bucket '%s' has explicit pos %d, which is occupied", it.nameTok.text, d.b.Name, it.pos)
		}
		used[it.pos] = true
	}
	d.b.Items = make([]int32, size)
	d.b.Weights = make([]uint32, size)
	var total uint32
	next := 0
	for _, it := range d.items {
		if d.b.Alg == crush.AlgUniform && it.weight != d.items[0].weight {
			return errorAt(it.nameTok, "item '%s' in uniform bucket '%s' has weight %s but previous item(s) have weight %s; uniform bucket items must all have identical weights",
				it.nameTok.text, d.b.Name, plainWeight(it.weight), plainWeight(d.items[0].weight))
		}
		if total+it.weight < total {
			return errorAt(it.nameTok, "bucket '%s' weight overflows 16.16 fixed point; lower the item weights", d.b.Name)
		}
		total += it.weight
		pos := it.pos
		if pos < 0 {
			for used[next] {
				next++
			}
			pos = next
			next++
		}
		d.b.Items[pos], d.b.Weights[pos] = it.id, it.weight
	}
	d.total = total
	return nil
}

// addBucket gives the bucket an id if it has none (the highest free one not
// written anywhere in the text) and records it.
func (p *parser) addBucket(d *bucketDraft) {
	if !d.hasID {
		id := int32(-1)
		for p.reserved[id] || p.usedIDs[id] != "" {
			id--
		}
		d.b.ID = id
		p.usedIDs[id] = fmt.Sprintf("bucket '%s'", d.b.Name)
	}
	p.weights[d.b.ID] = d.total
	p.items[d.b.Name] = d.b.ID
	p.buckets[d.b.ID] = len(p.spec.Buckets)
	for class, id := range d.b.ClassIDs {
		p.shadows[id] = shadowRef{bucket: d.b.ID, class: class}
	}
	p.spec.Buckets = append(p.spec.Buckets, d.b)
}

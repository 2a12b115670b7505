package crushtext

import (
	"math"

	"github.com/cuttlestore/cuttle/crush"
)

// The statements of a map's first section: tunables, devices and types.

func (p *parser) parseTunable() error {
	p.next()
	nameTok, err := p.expect(tokWord, "a tunable name")
	if err != nil {
		return err
	}
	field, limit := tunableField(&p.spec.Tunables, nameTok.text)
	if field == nil {
		return errorAt(nameTok, "tunable %s not recognized", nameTok.text)
	}
	v, _, err := p.integer("tunable "+nameTok.text, 0, int64(limit))
	if err != nil {
		return err
	}
	*field = uint32(v)
	return nil
}

// tunableField returns the field a tunable line sets and its largest value
// (three are 8-bit fields in Ceph's crush_map).
func tunableField(t *crush.Tunables, name string) (*uint32, uint32) {
	switch name {
	case "choose_local_tries":
		return &t.ChooseLocalTries, math.MaxUint32
	case "choose_local_fallback_tries":
		return &t.ChooseLocalFallbackTries, math.MaxUint32
	case "choose_total_tries":
		return &t.ChooseTotalTries, math.MaxUint32
	case "chooseleaf_descend_once":
		return &t.ChooseleafDescendOnce, math.MaxUint32
	case "chooseleaf_vary_r":
		return &t.ChooseleafVaryR, math.MaxUint8
	case "chooseleaf_stable":
		return &t.ChooseleafStable, math.MaxUint8
	case "straw_calc_version":
		return &t.StrawCalcVersion, math.MaxUint8
	case "allowed_bucket_algs":
		return &t.AllowedBucketAlgs, math.MaxUint32
	}
	return nil, 0
}

// parseDevice parses "device ID NAME [class CLASS]".
func (p *parser) parseDevice() error {
	p.next()
	id, idTok, err := p.integer("a device id", 0, maxID)
	if err != nil {
		return err
	}
	nameTok, err := p.name("device name")
	if err != nil {
		return err
	}
	if _, dup := p.items[nameTok.text]; dup {
		return errorAt(nameTok, "item %s defined twice", nameTok.text)
	}
	if _, dup := p.devClass[int32(id)]; dup {
		return errorAt(idTok, "device id %d defined twice", id)
	}
	dev := crush.Device{ID: int32(id), Name: nameTok.text}
	if p.peekWord("class") {
		p.next()
		classTok, err := p.name("device class")
		if err != nil {
			return err
		}
		dev.Class = classTok.text
		p.classes[dev.Class] = true
	}
	p.items[dev.Name] = dev.ID
	p.devClass[dev.ID] = dev.Class
	p.spec.Devices = append(p.spec.Devices, dev)
	return nil
}

// reservedTypeNames start other statements, so a bucket of such a type
// could not be told from them.
func reservedTypeName(s string) bool {
	switch s {
	case "tunable", "device", "type", "rule", "choose_args":
		return true
	}
	return false
}

// parseType parses "type ID NAME".
func (p *parser) parseType() error {
	p.next()
	id, idTok, err := p.integer("a type id", 0, math.MaxInt32)
	if err != nil {
		return err
	}
	nameTok, err := p.name("type name")
	if err != nil {
		return err
	}
	switch {
	case reservedTypeName(nameTok.text):
		return errorAt(nameTok, "type name %s is reserved", nameTok.text)
	case p.typeIDs[int32(id)]:
		return errorAt(idTok, "type id %d defined twice", id)
	}
	if _, dup := p.types[nameTok.text]; dup {
		return errorAt(nameTok, "type %s defined twice", nameTok.text)
	}
	p.types[nameTok.text] = int32(id)
	p.typeIDs[int32(id)] = true
	p.spec.Types = append(p.spec.Types, crush.BucketType{ID: int32(id), Name: nameTok.text})
	return nil
}

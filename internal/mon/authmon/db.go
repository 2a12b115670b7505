package authmon

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/auth"
)

// db is the auth database as applied. Its maps are never changed once the
// db is in use: Apply builds the next db from copies, so the KeyServer
// can hold the entities map while the next change is applied.
type db struct {
	version  uint64
	seeded   bool
	entities map[auth.EntityName]auth.KeyEntry
	rotating map[string]*auth.RotatingKeys // by service
}

func newDB() db {
	return db{entities: map[auth.EntityName]auth.KeyEntry{}, rotating: map[string]*auth.RotatingKeys{}}
}

// next returns a copy of d one version on, for Apply to change.
func (d *db) next() db {
	return db{version: d.version + 1, seeded: d.seeded,
		entities: maps.Clone(d.entities), rotating: maps.Clone(d.rotating)}
}

// sortedNames returns the entities' names in text order.
func (d *db) sortedNames() []auth.EntityName {
	return slices.SortedFunc(maps.Keys(d.entities), compareNames)
}

func compareNames(a, b auth.EntityName) int { return strings.Compare(a.String(), b.String()) }

// Store keys.
const (
	keyMeta        = "meta"
	prefixEntity   = "entity/"
	prefixRotating = "rotating/"
)

func entityKey(n auth.EntityName) []byte { return []byte(prefixEntity + n.String()) }
func rotatingKey(service string) []byte  { return []byte(prefixRotating + service) }

// Limits of decoded records.
const (
	maxName     = 256
	maxServices = 8
	maxEntities = 1 << 16
)

// parseName parses an entity name and checks it can be written to a
// keyring and a store key: no spaces, control characters or brackets.
func parseName(s string) (auth.EntityName, error) {
	n, err := auth.ParseEntityName(s)
	if err != nil {
		return auth.EntityName{}, err
	}
	if strings.ContainsFunc(n.ID, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '[' || r == ']' }) {
		return auth.EntityName{}, fmt.Errorf("entity name %q: the id may not hold spaces, control characters or brackets", s)
	}
	return n, nil
}

// encodeMeta writes the meta record.
func encodeMeta(version uint64, seeded bool) []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(version)
	e.Bool(seeded)
	e.End(m)
	return e.Data()
}

func decodeMeta(b []byte) (version uint64, seeded bool, err error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	version, seeded = d.Uvarint(), d.Bool()
	d.End()
	if err := d.Finish(); err != nil {
		return 0, false, fmt.Errorf("authmon: meta: %w", err)
	}
	return version, seeded, nil
}

// encodeEntry appends an entity's key and caps (services in order).
func encodeEntry(e *encoding.Encoder, k auth.KeyEntry) {
	m := e.Begin(1, 1)
	e.Bytes(k.Key[:])
	services := slices.Sorted(maps.Keys(k.Caps))
	e.Uvarint(uint64(len(services)))
	for _, s := range services {
		e.String(s)
		e.String(k.Caps[s])
	}
	e.End(m)
}

// decodeEntry reads what encodeEntry wrote and checks every cap text.
// needKey: a zero key is corrupt (false only for a caps change, which
// carries no key).
func decodeEntry(d *encoding.Decoder, needKey bool) auth.KeyEntry {
	d.Begin(1)
	var k auth.KeyEntry
	key := d.Bytes(auth.SecretSize)
	if d.Err() == nil && len(key) != auth.SecretSize {
		d.Fail(fmt.Errorf("%w: key of %d bytes", encoding.ErrCorrupt, len(key)))
	}
	copy(k.Key[:], key)
	if d.Err() == nil && needKey && k.Key.IsZero() {
		d.Fail(fmt.Errorf("%w: zero key", encoding.ErrCorrupt))
	}
	n := d.Count(2)
	if n > maxServices {
		d.Fail(fmt.Errorf("%w: %d services", encoding.ErrCorrupt, n))
	}
	prev := ""
	for i := 0; i < n && d.Err() == nil; i++ {
		s, text := d.String(maxName), d.String(auth.MaxCapsText)
		if d.Err() != nil {
			break
		}
		if i > 0 && cmp.Compare(prev, s) >= 0 {
			d.Fail(fmt.Errorf("%w: caps out of order at %q", encoding.ErrCorrupt, s))
			break
		}
		if err := checkCapText(s, text); err != nil {
			d.Fail(fmt.Errorf("%w: %w", encoding.ErrCorrupt, err))
			break
		}
		prev = s
		if k.Caps == nil {
			k.Caps = auth.Caps{}
		}
		k.Caps[s] = text
	}
	d.End()
	return k
}

// checkCapText validates one service's stored cap text: it parses and is
// not blank (blank caps are not stored).
func checkCapText(service, text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("blank caps for %s", service)
	}
	_, err := auth.ParseCaps(service, text)
	return err
}

// decodeEntity reads one entity record.
func decodeEntity(b []byte) (auth.KeyEntry, error) {
	d := encoding.NewDecoder(b)
	k := decodeEntry(d, true)
	if err := d.Finish(); err != nil {
		return auth.KeyEntry{}, fmt.Errorf("authmon: entity: %w", err)
	}
	return k, nil
}

func entityValue(k auth.KeyEntry) []byte {
	var e encoding.Encoder
	encodeEntry(&e, k)
	return e.Data()
}

func rotatingValue(r *auth.RotatingKeys) []byte {
	var e encoding.Encoder
	r.Encode(&e)
	return e.Data()
}

// decodeRotating reads one service's rotating keys stored under service.
func decodeRotating(service string, b []byte) (*auth.RotatingKeys, error) {
	d := encoding.NewDecoder(b)
	r, err := auth.DecodeRotatingKeys(d)
	if err == nil {
		err = d.Finish()
	}
	if err == nil && r.Service() != service {
		err = fmt.Errorf("%w: keys of %q stored as %q", encoding.ErrCorrupt, r.Service(), service)
	}
	if err != nil {
		return nil, fmt.Errorf("authmon: rotating keys of %s: %w", service, err)
	}
	return r, nil
}

// capsEqual reports whether a and b grant the same: equal services with
// equal canonical texts (so "allow  r" equals "allow r").
func capsEqual(a, b auth.Caps) bool {
	if len(a) != len(b) {
		return false
	}
	for s, ta := range a {
		tb, ok := b[s]
		if !ok || canonicalCaps(s, ta) != canonicalCaps(s, tb) {
			return false
		}
	}
	return true
}

func canonicalCaps(service, text string) string {
	g, err := auth.ParseCaps(service, text)
	if err != nil {
		return text
	}
	return g.String()
}

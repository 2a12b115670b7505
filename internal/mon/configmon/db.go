package configmon

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/encoding"
)

// entryKey names one value of the database.
type entryKey struct{ section, name string }

func compareKeys(a, b entryKey) int {
	return cmp.Or(strings.Compare(a.section, b.section), strings.Compare(a.name, b.name))
}

// db is the configuration database as applied: the values set, and how
// many changes made it.
type db struct {
	version uint64
	values  map[entryKey]string
}

func newDB() db { return db{values: map[entryKey]string{}} }

// sortedKeys returns the keys in (section, name) order.
func (d *db) sortedKeys() []entryKey {
	return slices.SortedFunc(maps.Keys(d.values), compareKeys)
}

// lookup returns the value of name for who and the section it comes from
// ("default" when no section sets it).
func (d *db) lookup(who, name string) (value, from string, ok bool) {
	for _, sec := range sectionsFor(who) {
		if v, ok := d.values[entryKey{sec, name}]; ok {
			return v, sec, true
		}
	}
	o, ok := Lookup(name)
	return o.Default, "default", ok
}

// maxEntries bounds a decoded database.
const maxEntries = 1 << 16

// encode writes the database in the format of the package documentation.
func (d *db) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(d.version)
	keys := d.sortedKeys()
	e.Uvarint(uint64(len(keys)))
	for _, k := range keys {
		e.String(k.section)
		e.String(k.name)
		e.String(d.values[k])
	}
	e.End(m)
	return e.Data()
}

// decodeDB reads what encode wrote and checks every entry against the
// schema as it is now; an entry this version no longer knows is kept, so
// that a downgrade does not lose settings.
func decodeDB(b []byte) (db, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	out := newDB()
	out.version = d.Uvarint()
	n := d.Count(3)
	if n > maxEntries {
		d.Fail(fmt.Errorf("%w: %d entries", encoding.ErrCorrupt, n))
	}
	var prev entryKey
	for i := 0; i < n && d.Err() == nil; i++ {
		k := entryKey{d.String(maxSection), d.String(maxSection)}
		v := d.String(maxValue)
		switch {
		case d.Err() != nil:
		case i > 0 && compareKeys(prev, k) >= 0:
			d.Fail(fmt.Errorf("%w: entries out of order at %s/%s", encoding.ErrCorrupt, k.section, k.name))
		case checkSection(k.section) != nil || k.name == "":
			d.Fail(fmt.Errorf("%w: bad entry %q/%q", encoding.ErrCorrupt, k.section, k.name))
		}
		prev = k
		out.values[k] = v
	}
	d.End()
	if err := d.Finish(); err != nil {
		return db{}, fmt.Errorf("configmon: database: %w", err)
	}
	return out, nil
}

package blockstore

import (
	"bytes"
	"slices"
	"strings"
)

// attr is one attribute of an object.
type attr struct {
	name  string
	value []byte
}

// attrList is an object's attributes sorted by name, each name once. A
// sorted slice rather than a map: most objects have one or two
// attributes (an OSD keeps one per object), and Go's smallest map costs
// about 370 bytes of heap, which limited how many records the cache held
// (TestRecordCacheAccounting measures the difference).
type attrList []attr

func (l attrList) find(name string) (int, bool) {
	return slices.BinarySearchFunc(l, name, func(a attr, n string) int { return strings.Compare(a.name, n) })
}

// get returns name's value (shared, not a copy) and whether it is set.
func (l attrList) get(name string) ([]byte, bool) {
	if i, ok := l.find(name); ok {
		return l[i].value, true
	}
	return nil, false
}

// set sets name to value, which the list keeps (callers pass a copy).
func (l *attrList) set(name string, value []byte) {
	i, ok := l.find(name)
	if ok {
		(*l)[i].value = value
		return
	}
	*l = slices.Insert(*l, i, attr{name, value})
}

// remove removes name if set.
func (l *attrList) remove(name string) {
	if i, ok := l.find(name); ok {
		*l = slices.Delete(*l, i, i+1)
	}
}

// equal reports whether two lists hold the same attributes.
func (l attrList) equal(m attrList) bool {
	return slices.EqualFunc(l, m, func(a, b attr) bool { return a.name == b.name && bytes.Equal(a.value, b.value) })
}

// approxSize is the heap the list holds: its backing array (a string
// and a slice header per entry) and the names and values.
func (l attrList) approxSize() int {
	s := 40 * cap(l)
	for _, a := range l {
		s += roundUp8(len(a.name)) + roundUp8(len(a.value))
	}
	return s
}

package format

import (
	"bytes"
	"slices"
	"strings"
)

// Attr is one attribute of an object.
type Attr struct {
	Name  string
	Value []byte
}

// AttrList is an object's attributes sorted by name, each name once. A
// sorted slice rather than a map: most objects have one or two
// attributes (an OSD keeps one per object), and Go's smallest map costs
// about 370 bytes of heap, which limited how many records the cache held
// (TestRecordCacheAccounting measures the difference).
type AttrList []Attr

func (l AttrList) find(name string) (int, bool) {
	return slices.BinarySearchFunc(l, name, func(a Attr, n string) int { return strings.Compare(a.Name, n) })
}

// Get returns name's value (shared, not a copy) and whether it is set.
func (l AttrList) Get(name string) ([]byte, bool) {
	if i, ok := l.find(name); ok {
		return l[i].Value, true
	}
	return nil, false
}

// Set sets name to value, which the list keeps (callers pass a copy).
func (l *AttrList) Set(name string, value []byte) {
	i, ok := l.find(name)
	if ok {
		(*l)[i].Value = value
		return
	}
	*l = slices.Insert(*l, i, Attr{name, value})
}

// Remove removes name if set.
func (l *AttrList) Remove(name string) {
	if i, ok := l.find(name); ok {
		*l = slices.Delete(*l, i, i+1)
	}
}

// equal reports whether two lists hold the same attributes.
func (l AttrList) equal(m AttrList) bool {
	return slices.EqualFunc(l, m, func(a, b Attr) bool { return a.Name == b.Name && bytes.Equal(a.Value, b.Value) })
}

// approxSize is the heap the list holds: its backing array (a string
// and a slice header per entry) and the names and values.
func (l AttrList) approxSize() int {
	s := 40 * cap(l)
	for _, a := range l {
		s += roundUp8(len(a.Name)) + roundUp8(len(a.Value))
	}
	return s
}

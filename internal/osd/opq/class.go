package opq

// Class is the kind of work an item is; a policy shares the OSD between
// classes.
type Class uint8

const (
	// Client is a client's op on an object (reads and writes).
	Client Class = iota
	// Replica is a primary's sub-op a replica applies (a rep op).
	Replica
	// Recovery is a push of an object to members that lack it.
	Recovery
	// Scrub is a chunk of a scrub.
	Scrub
	// SnapTrim is the trim of one object's clones that no live snapshot
	// needs any more (the OSD's snaptrim.go).
	SnapTrim

	numClasses
)

// Classes lists every class, in order.
func Classes() []Class { return []Class{Client, Replica, Recovery, Scrub, SnapTrim} }

// String names the class as metrics and dumps show it.
func (c Class) String() string {
	switch c {
	case Client:
		return "client"
	case Replica:
		return "replica"
	case Recovery:
		return "recovery"
	case Scrub:
		return "scrub"
	case SnapTrim:
		return "snaptrim"
	}
	return "unknown"
}

// Load is what a class has running: how many items, and their cost.
type Load struct {
	Items int
	Cost  int64
}

// CostOf is an item's cost for data of n bytes: the bytes, or 1 for an
// op that carries none, so that every item costs something.
func CostOf(n int) int64 { return max(int64(n), 1) }

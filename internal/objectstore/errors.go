package objectstore

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/objid"
)

// Errors engines return, classed so callers can test them with errors.Is.
// Engines wrap them with the collection, object and offset concerned.
var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("objectstore: object not found")
	// ErrCollectionNotFound: the collection does not exist.
	ErrCollectionNotFound = errors.New("objectstore: collection not found")
	// ErrExists: the object or collection already exists.
	ErrExists = errors.New("objectstore: already exists")
	// ErrNotEmpty: a collection still holds objects.
	ErrNotEmpty = errors.New("objectstore: collection not empty")
	// ErrNoAttr: the object has no such attribute.
	ErrNoAttr = errors.New("objectstore: no such attribute")
	// ErrNoSpace: the device cannot hold the transaction's data.
	ErrNoSpace = errors.New("objectstore: no space left")
	// ErrInvalid: the transaction or request is malformed (say, a write
	// past the maximum object size).
	ErrInvalid = errors.New("objectstore: invalid request")
	// ErrCorrupt: stored data or metadata failed verification (a checksum
	// mismatch, an undecodable record). The store never returns the bad
	// bytes; the caller should read another replica and repair.
	ErrCorrupt = errors.New("objectstore: corrupt data")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("objectstore: store closed")
)

// NotFoundError is ErrNotFound for one object. Engines return it where a
// missing object is routine (every new object's first write looks it
// up), since it costs one small allocation and formats its message only
// when asked.
type NotFoundError struct {
	Collection CollectionID
	Object     objid.ID
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%v: %v %v", ErrNotFound, e.Collection, e.Object)
}

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

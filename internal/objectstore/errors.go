package objectstore

import "errors"

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

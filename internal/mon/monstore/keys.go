package monstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Key prefixes: the first byte of every key. doc.go describes the value
// stored under each. The raft keys sort before the service key space so that
// one range deletion replaces the whole service key space.
const (
	prefixFormat    = 0x01 // format record
	prefixHardState = 0x02 // raft HardState
	prefixLogState  = 0x03 // index and term of the entry before the first
	prefixApplied   = 0x04 // applied index and ConfState
	prefixEntry     = 0x05 // raft log entries, by big-endian index
	prefixService   = 0x10 // service key space
	prefixEnd       = 0x11 // upper bound of the service key space
)

// Bounds on what the store accepts and decodes. They are part of the
// format: a decoder rejects anything larger as corrupt.
const (
	// MaxServiceName is the longest service name, in bytes.
	MaxServiceName = 64
	// MaxKey is the longest service key, in bytes.
	MaxKey = 4 << 10
	// MaxValue is the largest service value, in bytes.
	MaxValue = 64 << 20
	// MaxEntryData is the largest raft entry payload, in bytes.
	MaxEntryData = 64 << 20
)

var (
	keyFormat    = []byte{prefixFormat}
	keyHardState = []byte{prefixHardState}
	keyLogState  = []byte{prefixLogState}
	keyApplied   = []byte{prefixApplied}
)

// entryKey returns the key of the log entry at index.
func entryKey(index uint64) []byte {
	k := make([]byte, 9)
	k[0] = prefixEntry
	binary.BigEndian.PutUint64(k[1:], index)
	return k
}

// entryKeyIndex returns the index in an entry key.
func entryKeyIndex(k []byte) (uint64, error) {
	if len(k) != 9 || k[0] != prefixEntry {
		return 0, fmt.Errorf("%w: malformed log entry key %x", ErrCorrupt, k)
	}
	return binary.BigEndian.Uint64(k[1:]), nil
}

// entryKeyEnd is the upper bound of every entry key.
var entryKeyEnd = []byte{prefixEntry + 1}

// checkService validates a service name: 1 to MaxServiceName bytes, no NUL
// (the NUL ends the name inside a key).
func checkService(service string) error {
	if len(service) == 0 || len(service) > MaxServiceName || bytes.IndexByte([]byte(service), 0) >= 0 {
		return fmt.Errorf("%w: service name %q must be 1 to %d bytes without NUL", ErrInvalid, service, MaxServiceName)
	}
	return nil
}

func checkKey(key []byte) error {
	if len(key) > MaxKey {
		return fmt.Errorf("%w: key of %d bytes exceeds %d", ErrInvalid, len(key), MaxKey)
	}
	return nil
}

// serviceKey returns the store key of key in service: prefixService,
// service, NUL, key.
func serviceKey(service string, key []byte) []byte {
	k := make([]byte, 0, 2+len(service)+len(key))
	k = append(k, prefixService)
	k = append(k, service...)
	k = append(k, 0)
	return append(k, key...)
}

// serviceBounds returns the key range of the keys of service that start
// with prefix.
func serviceBounds(service string, prefix []byte) (lower, upper []byte) {
	lower = serviceKey(service, prefix)
	return lower, prefixSuccessor(lower)
}

// prefixSuccessor returns the smallest key greater than every key with
// prefix p, or nil if there is none (p is all 0xff).
func prefixSuccessor(p []byte) []byte {
	s := bytes.Clone(p)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}

// splitServiceKey splits a store key of the service key space into service
// and key.
func splitServiceKey(k []byte) (service string, key []byte, err error) {
	if len(k) < 2 || k[0] != prefixService {
		return "", nil, fmt.Errorf("%w: malformed service key %q", ErrCorrupt, k)
	}
	i := bytes.IndexByte(k[1:], 0)
	if i < 1 || i > MaxServiceName || len(k)-(i+2) > MaxKey {
		return "", nil, fmt.Errorf("%w: malformed service key %q", ErrCorrupt, k)
	}
	return string(k[1 : 1+i]), k[i+2:], nil
}

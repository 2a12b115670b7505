package auth

import (
	"fmt"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

// Shared pieces of auth's binary encodings (encoding's envelopes; layouts
// in docs/AUTH.md). Every decoder bounds what it reads and reports
// failures wrapping ErrMalformed.

// Bounds on decoded fields.
const (
	maxNameLen    = 256 // each of an entity's type and id
	maxServiceLen = 16
	maxServices   = 8
	maxBlob       = 16 << 10 // a sealed ticket or proof
	maxKeys       = 64       // keys in one rotating set
	maxPeriod     = 366 * 24 * time.Hour
)

func encodeName(e *encoding.Encoder, n EntityName) {
	e.String(n.Type)
	e.String(n.ID)
}

func decodeName(d *encoding.Decoder) EntityName {
	n := EntityName{Type: d.String(maxNameLen), ID: d.String(maxNameLen)}
	if d.Err() == nil && (!entityTypes[n.Type] || n.ID == "") {
		d.Fail(fmt.Errorf("bad entity name %q", n.String()))
	}
	return n
}

func encodeTime(e *encoding.Encoder, t time.Time) { e.Varint(t.UnixNano()) }

func decodeTime(d *encoding.Decoder) time.Time { return time.Unix(0, d.Varint()) }

func encodeSecret(e *encoding.Encoder, s Secret) { e.Bytes(s[:]) }

func decodeSecret(d *encoding.Decoder) Secret {
	var s Secret
	b := d.Bytes(SecretSize)
	if d.Err() == nil && len(b) != SecretSize {
		d.Fail(fmt.Errorf("secret of %d bytes, want %d", len(b), SecretSize))
	}
	copy(s[:], b)
	return s
}

func decodeService(d *encoding.Decoder) string {
	s := d.String(maxServiceLen)
	if d.Err() == nil && !isCapService(s) {
		d.Fail(fmt.Errorf("unknown service %q", s))
	}
	return s
}

func encodeCaps(e *encoding.Encoder, c Caps) {
	services := sortedKeys(c)
	e.Uvarint(uint64(len(services)))
	for _, s := range services {
		e.String(s)
		e.String(c[s])
	}
}

func decodeCaps(d *encoding.Decoder) Caps {
	n := d.Count(2)
	if n > maxServices {
		d.Fail(fmt.Errorf("%d cap services, limit %d", n, maxServices))
		return nil
	}
	c := make(Caps, n)
	for range n {
		s := decodeService(d)
		c[s] = d.String(MaxCapsText)
	}
	return c
}

// malformed wraps a decode error.
func malformed(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrMalformed, what, err)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package auth

import (
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

// rotatingKeysVersion is the envelope version of RotatingKeys.
const rotatingKeysVersion = 1

// Encode appends r: envelope{service, period ns, next id, keys{id,
// secret, expires}}. It holds secrets: store it encrypted at rest or send
// it only with Seal.
func (r *RotatingKeys) Encode(e *encoding.Encoder) {
	m := e.Begin(rotatingKeysVersion, 1)
	e.String(r.service)
	e.Varint(int64(r.period))
	e.Uvarint(r.nextID)
	e.Uvarint(uint64(len(r.keys)))
	for _, k := range r.keys {
		e.Uvarint(k.ID)
		encodeSecret(e, k.Secret)
		encodeTime(e, k.Expires)
	}
	e.End(m)
}

// DecodeRotatingKeys reads what Encode wrote.
func DecodeRotatingKeys(d *encoding.Decoder) (*RotatingKeys, error) {
	d.Begin(rotatingKeysVersion)
	r := &RotatingKeys{service: decodeService(d), period: decodeDuration(d), nextID: d.Uvarint()}
	n := d.Count(SecretSize + 3)
	if n > maxKeys {
		d.Fail(fmt.Errorf("%d keys, limit %d", n, maxKeys))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		k := ServiceKey{ID: d.Uvarint(), Secret: decodeSecret(d), Expires: decodeTime(d)}
		if len(r.keys) > 0 && (k.ID <= r.keys[len(r.keys)-1].ID || k.Expires.Before(r.keys[len(r.keys)-1].Expires)) {
			d.Fail(fmt.Errorf("key %d out of order", k.ID))
		}
		if k.ID >= r.nextID {
			d.Fail(fmt.Errorf("key %d not below next id %d", k.ID, r.nextID))
		}
		r.keys = append(r.keys, k)
	}
	d.End()
	if err := d.Err(); err != nil {
		return nil, malformed("rotating keys", err)
	}
	return r, nil
}

func decodeDuration(d *encoding.Decoder) time.Duration {
	p := time.Duration(d.Varint())
	if d.Err() == nil && (p <= 0 || p > maxPeriod) {
		d.Fail(fmt.Errorf("period %v out of range", p))
	}
	return p
}

// Seal encodes r and seals it under key (a daemon's session key with the
// monitor, or its secret), for the monitor to send to the service's
// daemons: frames are signed, not encrypted, so keys never travel bare.
func (r *RotatingKeys) Seal(key []byte) []byte {
	var e encoding.Encoder
	r.Encode(&e)
	return seal(key, purposeRotatingKeys, e.Data(), nil)
}

// OpenRotatingKeys opens what Seal returned. A box that does not open
// under key is a Refusal with ReasonBadProof.
func OpenRotatingKeys(key, box []byte) (*RotatingKeys, error) {
	pt, err := open(key, purposeRotatingKeys, box, nil)
	if err != nil {
		return nil, &Refusal{Reason: ReasonBadProof, Detail: "rotating keys do not open under the session key"}
	}
	d := encoding.NewDecoder(pt)
	r, err := DecodeRotatingKeys(d)
	if err != nil {
		return nil, err
	}
	if err := d.Finish(); err != nil {
		return nil, malformed("rotating keys", err)
	}
	return r, nil
}

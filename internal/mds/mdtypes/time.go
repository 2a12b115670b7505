package mdtypes

import (
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

// Time is a file time: seconds since the Unix epoch (signed 64-bit, so
// times before 1970 and far past 2038 and 2106 are exact) and
// nanoseconds.
type Time struct {
	Sec  int64
	Nsec uint32
}

// TimeOf converts a time.Time.
func TimeOf(t time.Time) Time { return Time{Sec: t.Unix(), Nsec: uint32(t.Nanosecond())} }

// Go returns the time as a time.Time in UTC.
func (t Time) Go() time.Time { return time.Unix(t.Sec, int64(t.Nsec)).UTC() }

// Before reports whether t is before u.
func (t Time) Before(u Time) bool {
	return t.Sec < u.Sec || (t.Sec == u.Sec && t.Nsec < u.Nsec)
}

func (t Time) String() string { return fmt.Sprintf("%d.%09d", t.Sec, t.Nsec) }

func (t Time) encode(e *encoding.Encoder) {
	e.Varint(t.Sec)
	e.Uint32(t.Nsec)
}

func (t *Time) decode(d *encoding.Decoder) {
	t.Sec = d.Varint()
	t.Nsec = d.Uint32()
	if t.Nsec >= 1e9 {
		d.Fail(fmt.Errorf("%w: nanoseconds %d not below 1e9", encoding.ErrCorrupt, t.Nsec))
	}
}

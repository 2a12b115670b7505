package moncmd

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Codes are errno values, as Ceph's monitor returns them, so scripts can
// tell "already exists" from "invalid".
const (
	OK      = 0
	EPERM   = 1
	ENOENT  = 2
	EAGAIN  = 11
	EACCES  = 13
	EBUSY   = 16
	EEXIST  = 17
	EINVAL  = 22
	ERANGE  = 34
	ENOTSUP = 95
)

// Reply answers a Command. Code is 0 on success; Status is a one-line
// message for people; Data is a JSON document for tools (--format json);
// Text is the same result formatted for people.
type Reply struct {
	Code   int32
	Status string
	Data   []byte
	Text   string
}

// Errorf returns a failed Reply.
func Errorf(code int32, format string, args ...any) Reply {
	return Reply{Code: code, Status: fmt.Sprintf(format, args...)}
}

// FromError turns an error into a failed Reply: EINVAL for argument
// errors, else code.
func FromError(err error, code int32) Reply {
	if errors.Is(err, ErrBadArg) {
		code = EINVAL
	}
	return Reply{Code: code, Status: err.Error()}
}

// Err returns nil for a successful reply and an error carrying the code
// and status otherwise.
func (r Reply) Err() error {
	if r.Code == OK {
		return nil
	}
	return &Error{Code: r.Code, Status: r.Status}
}

// Error is a failed Reply as an error.
type Error struct {
	Code   int32
	Status string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (error %d)", e.Status, e.Code) }

const (
	maxStatus = 64 << 10
	maxData   = 64 << 20
)

// Encode encodes r: version 1: code (u32 two's complement), status
// string, data bytes, text string.
func (r Reply) Encode() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uint32(uint32(r.Code))
	e.String(r.Status)
	e.Bytes(r.Data)
	e.String(r.Text)
	e.End(m)
	return e.Data()
}

// DecodeReply decodes an encoded Reply.
func DecodeReply(b []byte) (Reply, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := Reply{Code: int32(d.Uint32()), Status: d.String(maxStatus), Data: d.Bytes(maxData), Text: d.String(maxData)}
	d.End()
	if err := d.Finish(); err != nil {
		return Reply{}, fmt.Errorf("moncmd: reply: %w", err)
	}
	return r, nil
}

package wire

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/encoding"
)

// Command is one monitor command, the payload of MonCommand: a prefix
// naming it ("osd pool create") and named arguments ("pool": "rbd",
// "pg_num": "64").
type Command struct {
	Prefix string
	Args   map[string]string
}

// NewCommand returns a command with the given prefix and alternating argument
// names and values.
func NewCommand(prefix string, kv ...string) Command {
	c := Command{Prefix: prefix, Args: make(map[string]string, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Args[kv[i]] = kv[i+1]
	}
	return c
}

// ErrBadArg is the class of argument errors (errors.Is); the driver
// answers them with EINVAL. Make them with BadArgf.
var ErrBadArg = errors.New("wire: bad argument")

// BadArgf returns an argument error: errors.Is(err, ErrBadArg) holds,
// and its text is the formatted message alone, so the reply a client
// prints says what is wrong with the argument rather than naming this
// package.
func BadArgf(format string, args ...any) error {
	return &argError{msg: fmt.Sprintf(format, args...)}
}

type argError struct{ msg string }

func (e *argError) Error() string        { return e.msg }
func (e *argError) Is(target error) bool { return target == ErrBadArg }

// Has reports whether the argument is present.
func (c Command) Has(name string) bool { _, ok := c.Args[name]; return ok }

// Str returns a required string argument.
func (c Command) Str(name string) (string, error) {
	v, ok := c.Args[name]
	if !ok || v == "" {
		return "", BadArgf("%s: missing %q", c.Prefix, name)
	}
	return v, nil
}

// StrOr returns an optional string argument.
func (c Command) StrOr(name, def string) string {
	if v, ok := c.Args[name]; ok {
		return v
	}
	return def
}

// Int returns a required integer argument.
func (c Command) Int(name string) (int64, error) {
	v, err := c.Str(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, BadArgf("%s: %q is not an integer: %q", c.Prefix, name, v)
	}
	return n, nil
}

// IntOr returns an optional integer argument.
func (c Command) IntOr(name string, def int64) (int64, error) {
	if !c.Has(name) {
		return def, nil
	}
	return c.Int(name)
}

// Float returns a required floating-point argument.
func (c Command) Float(name string) (float64, error) {
	v, err := c.Str(name)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, BadArgf("%s: %q is not a number: %q", c.Prefix, name, v)
	}
	return f, nil
}

// Bool returns an optional boolean argument (absent: false).
func (c Command) Bool(name string) (bool, error) {
	v, ok := c.Args[name]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, BadArgf("%s: %q is not true or false: %q", c.Prefix, name, v)
	}
	return b, nil
}

func (c Command) String() string {
	var b strings.Builder
	b.WriteString(c.Prefix)
	for _, k := range slices.Sorted(maps.Keys(c.Args)) {
		fmt.Fprintf(&b, " %s=%q", k, c.Args[k])
	}
	return b.String()
}

// Limits on decoded commands.
const (
	maxPrefix = 256
	maxArgs   = 256
	maxArg    = 64 << 10
)

// Encode encodes c: version 1: prefix string, count, then (name, value)
// strings in name order.
func (c Command) Encode() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.String(c.Prefix)
	names := slices.Sorted(maps.Keys(c.Args))
	e.Uvarint(uint64(len(names)))
	for _, k := range names {
		e.String(k)
		e.String(c.Args[k])
	}
	e.End(m)
	return e.Data()
}

// DecodeCommand decodes an encoded Command.
func DecodeCommand(b []byte) (Command, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	c := Command{Prefix: d.String(maxPrefix)}
	n := d.Count(2)
	if n > maxArgs {
		d.Fail(fmt.Errorf("%w: %d arguments", encoding.ErrCorrupt, n))
	}
	c.Args = make(map[string]string, min(n, maxArgs))
	for i := 0; i < n && d.Err() == nil; i++ {
		k, v := d.String(maxPrefix), d.String(maxArg)
		if _, dup := c.Args[k]; dup && d.Err() == nil {
			d.Fail(fmt.Errorf("%w: argument %q twice", encoding.ErrCorrupt, k))
		}
		c.Args[k] = v
	}
	d.End()
	if err := d.Finish(); err != nil {
		return Command{}, fmt.Errorf("wire: command: %w", err)
	}
	return c, nil
}

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

// Error tells the status and the code by its errno name, as Ceph's CLI
// does ("... (EPERM)"), so a person can look it up and a script match it.
func (e *Error) Error() string { return fmt.Sprintf("%s (%s)", e.Status, ErrnoName(e.Code)) }

// ErrnoName returns code's errno name ("ENOENT"), negative codes as
// their positive ones, or "error N" for a code this package does not
// define.
func ErrnoName(code int32) string {
	switch max(code, -code) {
	case EPERM:
		return "EPERM"
	case ENOENT:
		return "ENOENT"
	case EIO:
		return "EIO"
	case E2BIG:
		return "E2BIG"
	case EAGAIN:
		return "EAGAIN"
	case EACCES:
		return "EACCES"
	case EBUSY:
		return "EBUSY"
	case EEXIST:
		return "EEXIST"
	case EINVAL:
		return "EINVAL"
	case EFBIG:
		return "EFBIG"
	case ENOSPC:
		return "ENOSPC"
	case EROFS:
		return "EROFS"
	case EMLINK:
		return "EMLINK"
	case EBLOCKLISTED:
		return "EBLOCKLISTED"
	case ERANGE:
		return "ERANGE"
	case ENODATA:
		return "ENODATA"
	case EOVERFLOW:
		return "EOVERFLOW"
	case ENOTSUP:
		return "ENOTSUP"
	case ETIMEDOUT:
		return "ETIMEDOUT"
	case ESTALE:
		return "ESTALE"
	case ECANCELED:
		return "ECANCELED"
	case ENOTCONN:
		return "ENOTCONN"
	}
	return fmt.Sprintf("error %d", code)
}

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
		return Reply{}, fmt.Errorf("wire: reply: %w", err)
	}
	return r, nil
}

package moncmd

import "github.com/cuttlestore/cuttle/internal/wire"

// The command and reply types travel between clients and monitors, so
// they are defined with the other messages in internal/wire; these names
// let services speak of them as moncmd's.

// Command is wire.Command.
type Command = wire.Command

// Reply is wire.Reply.
type Reply = wire.Reply

// Error is wire.Error.
type Error = wire.Error

// ErrBadArg is wire.ErrBadArg.
var ErrBadArg = wire.ErrBadArg // a sentinel, never reassigned

// BadArgf is wire.BadArgf: an argument error, ErrBadArg by errors.Is.
func BadArgf(format string, args ...any) error { return wire.BadArgf(format, args...) }

// Codes are errno values (wire's).
const (
	OK        = wire.OK
	EPERM     = wire.EPERM
	ENOENT    = wire.ENOENT
	EAGAIN    = wire.EAGAIN
	EACCES    = wire.EACCES
	EBUSY     = wire.EBUSY
	EEXIST    = wire.EEXIST
	EINVAL    = wire.EINVAL
	ERANGE    = wire.ERANGE
	ENOTSUP   = wire.ENOTSUP
	ETIMEDOUT = wire.ETIMEDOUT
	ENOSPC    = wire.ENOSPC
)

// New returns a command with the given prefix and alternating argument
// names and values.
func New(prefix string, kv ...string) Command { return wire.NewCommand(prefix, kv...) }

// Errorf returns a failed Reply.
func Errorf(code int32, format string, args ...any) Reply { return wire.Errorf(code, format, args...) }

// FromError turns an error into a failed Reply: EINVAL for argument
// errors, else code.
func FromError(err error, code int32) Reply { return wire.FromError(err, code) }

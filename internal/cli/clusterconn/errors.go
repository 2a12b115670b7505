package clusterconn

import "strings"

// How the CLI reports a failure (cmd/cuttle prints "cuttle: " and the
// error, and exits 1): what failed first, named once, then the cause:
//
//	cuttle: osd pool set: unrecognized pool 'nosuch' (ENOENT)
//	cuttle: --conf /nope: no such file or directory
//	cuttle: tell: osd.9 does not exist (the map at epoch 12 has osd.0-osd.2)
//
// Monitors' replies often name their command already ("auth get: unknown
// entity ..."); [Named] does not name it again. Library errors keep their
// classes: every wrapper here unwraps, so errors.Is and errors.As see
// through them.

// namedError is err with what failed (a monitor command's prefix, a
// CLI command's path) in front of it, once.
type namedError struct {
	name string
	err  error
}

// Named returns err with name in front of it, unless err's text starts
// with name already; nil for a nil err.
func Named(name string, err error) error {
	if err == nil {
		return nil
	}
	return &namedError{name: name, err: err}
}

func (e *namedError) Error() string {
	msg := e.err.Error()
	for strings.HasPrefix(msg, e.name+": ") {
		msg = msg[len(e.name)+2:]
	}
	return e.name + ": " + msg
}

func (e *namedError) Unwrap() error { return e.err }

// shownError is err told in the CLI's words: msg is printed, err stays
// reachable for errors.Is and errors.As.
type shownError struct {
	msg string
	err error
}

// Shown returns an error that prints msg and unwraps to err: a library
// error told in the CLI's words, still reachable for errors.Is and
// errors.As.
func Shown(msg string, err error) error {
	return &shownError{msg: msg, err: err}
}

func (e *shownError) Error() string { return e.msg }
func (e *shownError) Unwrap() error { return e.err }

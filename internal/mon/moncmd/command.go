package moncmd

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/encoding"
)

// Command is one monitor command: a prefix naming it ("osd pool create")
// and named arguments ("pool": "rbd", "pg_num": "64").
type Command struct {
	Prefix string
	Args   map[string]string
}

// New returns a command with the given prefix and alternating argument
// names and values.
func New(prefix string, kv ...string) Command {
	c := Command{Prefix: prefix, Args: make(map[string]string, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Args[kv[i]] = kv[i+1]
	}
	return c
}

// ErrBadArg is wrapped by argument errors; the driver answers them with
// EINVAL.
var ErrBadArg = errors.New("moncmd: bad argument")

// Has reports whether the argument is present.
func (c Command) Has(name string) bool { _, ok := c.Args[name]; return ok }

// Str returns a required string argument.
func (c Command) Str(name string) (string, error) {
	v, ok := c.Args[name]
	if !ok || v == "" {
		return "", fmt.Errorf("%w: %s: missing %q", ErrBadArg, c.Prefix, name)
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
		return 0, fmt.Errorf("%w: %s: %q is not an integer: %q", ErrBadArg, c.Prefix, name, v)
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
		return 0, fmt.Errorf("%w: %s: %q is not a number: %q", ErrBadArg, c.Prefix, name, v)
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
		return false, fmt.Errorf("%w: %s: %q is not true or false: %q", ErrBadArg, c.Prefix, name, v)
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
		return Command{}, fmt.Errorf("moncmd: command: %w", err)
	}
	return c, nil
}

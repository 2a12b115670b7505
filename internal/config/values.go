package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Source is where a value comes from. A later source wins over an
// earlier one: a flag over the file, the file over the central config,
// the central config over the default (Ceph's order, and its names in
// "config show").
type Source uint8

// Sources, in increasing precedence.
const (
	SourceDefault  Source = iota // the schema's default
	SourceMon                    // the central config the monitors keep
	SourceFile                   // the local configuration file
	SourceFlag                   // a command-line flag
	SourceOverride               // set by the program that embeds the daemon (its Config struct, in tests and the simulator)
)

func (s Source) String() string {
	switch s {
	case SourceDefault:
		return "default"
	case SourceMon:
		return "mon"
	case SourceFile:
		return "file"
	case SourceFlag:
		return "cmdline"
	case SourceOverride:
		return "override"
	}
	return fmt.Sprintf("source(%d)", uint8(s))
}

// ErrBadValue is wrapped by Resolve's errors: a source set an option to a
// value its type or bounds refuse.
var ErrBadValue = errors.New("config: bad value")

// Layer is what one source sets, by option name, as the source gives
// the values (Resolve checks them).
type Layer struct {
	Source Source
	Values map[string]string
}

// FileLayer is what f sets for entity ("osd.3") among names: its own
// section, else its type's, else [global]. A nil f sets nothing.
func FileLayer(f *File, entity string, names []string) Layer {
	l := Layer{Source: SourceFile, Values: map[string]string{}}
	if f == nil {
		return l
	}
	for _, n := range names {
		if v, ok := f.Get(entity, n); ok {
			l.Values[n] = v
		}
	}
	return l
}

// Value is one option's value in effect, in canonical form, and the
// source it came from.
type Value struct {
	Name   string
	Value  string
	Source Source
}

// Values are a daemon's options as resolved: each option it reads, from
// the highest source that sets it. The zero Values holds none.
type Values struct {
	byName map[string]Value
}

// Resolve returns the options called names, each from the layer of
// highest precedence that sets it (layers are ordered by their Source,
// whatever order they are given in), else its default. Names a layer sets
// that are not asked for are ignored. A value its option refuses is
// skipped (a lower source, or the default, applies) and reported in the
// error, which wraps ErrBadValue; the Values returned are complete either
// way. A name that is not in the schema is an error of its own.
func Resolve(names []string, layers ...Layer) (Values, error) {
	layers = slices.Clone(layers)
	slices.SortStableFunc(layers, func(a, b Layer) int { return int(a.Source) - int(b.Source) })
	v := Values{byName: make(map[string]Value, len(names))}
	var errs []error
	for _, name := range names {
		o, ok := Lookup(name)
		if !ok {
			return Values{}, fmt.Errorf("config: no option %q in the schema", name)
		}
		val := Value{Name: name, Value: o.Default, Source: SourceDefault}
		for _, l := range layers {
			raw, ok := l.Values[name]
			if !ok {
				continue
			}
			canon, err := o.Parse(raw)
			if err != nil {
				errs = append(errs, fmt.Errorf("%w from %s: %w", ErrBadValue, l.Source, err))
				continue
			}
			val = Value{Name: name, Value: canon, Source: l.Source}
		}
		v.byName[name] = val
	}
	return v, errors.Join(errs...)
}

// Get returns the value of the option called name.
func (v Values) Get(name string) (Value, bool) {
	x, ok := v.byName[name]
	return x, ok
}

// All returns every value, by option name.
func (v Values) All() []Value {
	out := make([]Value, 0, len(v.byName))
	for _, n := range slices.Sorted(maps.Keys(v.byName)) {
		out = append(out, v.byName[n])
	}
	return out
}

// Equal reports whether v and w hold the same values from the same
// sources.
func (v Values) Equal(w Values) bool { return maps.Equal(v.byName, w.byName) }

// The typed accessors return an option's value, or the zero value for a
// name Resolve was not asked for or of another type: the callers are the
// daemons, whose option names their tests check against the schema.

// Int returns an int option.
func (v Values) Int(name string) int64 {
	n, _ := strconv.ParseInt(v.typed(name, TypeInt), 10, 64)
	return n
}

// Size returns a size option in bytes.
func (v Values) Size(name string) int64 {
	n, _ := strconv.ParseInt(v.typed(name, TypeSize), 10, 64)
	return n
}

// Float returns a float option.
func (v Values) Float(name string) float64 {
	f, _ := strconv.ParseFloat(v.typed(name, TypeFloat), 64)
	return f
}

// Bool returns a bool option.
func (v Values) Bool(name string) bool { return v.typed(name, TypeBool) == "true" }

// String returns a string option.
func (v Values) String(name string) string { return v.typed(name, TypeString) }

// Duration returns a duration option.
func (v Values) Duration(name string) time.Duration {
	d, _ := time.ParseDuration(v.typed(name, TypeDuration))
	return d
}

func (v Values) typed(name string, t Type) string {
	o, ok := Lookup(name)
	if !ok || o.Type != t {
		return ""
	}
	return v.byName[name].Value
}

// With returns v with the values w holds in place of v's.
func (v Values) With(w Values) Values {
	out := Values{byName: maps.Clone(v.byName)}
	if out.byName == nil {
		out.byName = map[string]Value{}
	}
	maps.Copy(out.byName, w.byName)
	return out
}

// DecodeCentral decodes the monitors' answer to "config get who=NAME"
// (a JSON list of {name, value}): what the central config sets for that
// daemon.
func DecodeCentral(data []byte) (map[string]string, error) {
	var entries []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("config get's answer: %w", err)
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.Name] = e.Value
	}
	return out, nil
}

package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Output formats accepted by --format.
const (
	FormatPlain = "plain"
	FormatJSON  = "json"
)

// Output prints command results in the format the user chose.
type Output struct {
	// Format is FormatPlain or FormatJSON; empty means FormatPlain.
	Format string
	// W receives the output.
	W io.Writer
}

// Print writes v to o.W: as indented JSON followed by a newline when the
// format is JSON, or by calling plain when it is plain text. A nil plain
// prints v with fmt's %v and a newline. v should be a struct with json tags
// (or a slice or map of them), so that the JSON form is a stable interface
// for tools.
func (o *Output) Print(v any, plain func(w io.Writer) error) error {
	switch o.Format {
	case FormatJSON:
		enc := json.NewEncoder(o.W)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("cli: print json: %w", err)
		}
		return nil
	case FormatPlain, "":
		if plain == nil {
			_, err := fmt.Fprintf(o.W, "%v\n", v)
			return err
		}
		return plain(o.W)
	default:
		return fmt.Errorf("cli: unknown output format %q", o.Format)
	}
}

// FormatFlag is the pflag.Value behind --format; it rejects unknown formats
// while the flags are parsed, before any command runs.
type FormatFlag string

func (f *FormatFlag) String() string { return string(*f) }

func (f *FormatFlag) Type() string { return "format" }

func (f *FormatFlag) Set(s string) error {
	switch s {
	case FormatPlain, FormatJSON:
		*f = FormatFlag(s)
		return nil
	}
	return fmt.Errorf("must be one of %s", strings.Join([]string{FormatPlain, FormatJSON}, ", "))
}

package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// File is a parsed configuration file: values by section, then by
// option name. Option names are normalized: spaces and dashes become
// underscores ("mon host" and "mon-host" are "mon_host").
type File struct {
	sections map[string]map[string]string
	order    []string // sections in file order, for Marshal
}

// ErrSyntax is wrapped by parse errors, which name the line.
var ErrSyntax = errors.New("config: syntax error")

// MaxFileSize bounds a configuration file.
const MaxFileSize = 1 << 20

// Parse parses a configuration file.
func Parse(b []byte) (*File, error) {
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%w: file of %d bytes (limit %d)", ErrSyntax, len(b), MaxFileSize)
	}
	f := New()
	section := ""
	for i, line := range bytes.Split(b, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		if s[0] == '[' {
			if !strings.HasSuffix(s, "]") || len(s) < 3 {
				return nil, fmt.Errorf("%w: line %d: bad section header %q", ErrSyntax, i+1, s)
			}
			section = strings.TrimSpace(s[1 : len(s)-1])
			if section == "" || strings.ContainsAny(section, "[]") {
				return nil, fmt.Errorf("%w: line %d: bad section name %q", ErrSyntax, i+1, s)
			}
			f.section(section)
			continue
		}
		name, value, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("%w: line %d: want NAME = VALUE, got %q", ErrSyntax, i+1, s)
		}
		if section == "" {
			return nil, fmt.Errorf("%w: line %d: option %q before any [section]", ErrSyntax, i+1, strings.TrimSpace(name))
		}
		name = normalize(name)
		if name == "" {
			return nil, fmt.Errorf("%w: line %d: empty option name", ErrSyntax, i+1)
		}
		f.Set(section, name, strings.TrimSpace(stripComment(value)))
	}
	return f, nil
}

// Load reads and parses the file at path.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// New returns an empty File.
func New() *File { return &File{sections: map[string]map[string]string{}} }

func normalize(name string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(strings.TrimSpace(name))
}

// stripComment drops a trailing " # comment" or " ; comment".
func stripComment(v string) string {
	for _, marker := range []string{" #", " ;", "\t#", "\t;"} {
		if i := strings.Index(v, marker); i >= 0 {
			v = v[:i]
		}
	}
	return v
}

func (f *File) section(name string) map[string]string {
	s, ok := f.sections[name]
	if !ok {
		s = map[string]string{}
		f.sections[name] = s
		f.order = append(f.order, name)
	}
	return s
}

// Set sets an option in a section.
func (f *File) Set(section, name, value string) { f.section(section)[normalize(name)] = value }

// Get returns an option for an entity ("mon.a", "osd.3", "client.admin"
// or "" for global only): its own section, then its type's section, then
// [global].
func (f *File) Get(entity, name string) (string, bool) {
	name = normalize(name)
	typ, _, _ := strings.Cut(entity, ".")
	for _, sec := range []string{entity, typ, "global"} {
		if sec == "" {
			continue
		}
		if v, ok := f.sections[sec][name]; ok {
			return v, true
		}
	}
	return "", false
}

// Marshal writes the file back in its section order, options sorted.
func (f *File) Marshal() []byte {
	var b bytes.Buffer
	for i, sec := range f.order {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%s]\n", sec)
		names := make([]string, 0, len(f.sections[sec]))
		for n := range f.sections[sec] {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			fmt.Fprintf(&b, "\t%s = %s\n", n, f.sections[sec][n])
		}
	}
	return b.Bytes()
}

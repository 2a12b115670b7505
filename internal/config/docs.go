package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Markers around the option table in docs/CONFIG.md, which
// MarkdownTable writes (go test ./internal/config -run TestConfigDoc
// -update rewrites it there).
const (
	DocBegin = "<!-- BEGIN options: generated from internal/config/schema.go; go test ./internal/config -run TestConfigDoc -update -->"
	DocEnd   = "<!-- END options -->"
)

// MarkdownTable returns the schema as a Markdown table: every option with
// its type and bounds, default, the daemons that read it and the flag
// that overrides it, whether a change applies at once, and its
// description.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| option | type | default | read by | flag | runtime | meaning |\n|---|---|---|---|---|---|---|\n")
	for _, o := range Schema() {
		readBy, flag, runtime := "—", "—", "restart"
		if len(o.Daemons) > 0 {
			readBy = strings.Join(o.Daemons, ", ")
		}
		if o.Flag != "" {
			flag = "`--" + o.Flag + "`"
		}
		if o.Runtime {
			runtime = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s | %s | %s |\n", o.Name, typeDoc(o), o.Default, readBy, flag, runtime, o.Desc)
	}
	return b.String()
}

// typeDoc is an option's type with its bounds or allowed values.
func typeDoc(o Option) string {
	t := o.Type.String()
	switch {
	case len(o.Enum) > 0:
		return t + ": " + strings.Join(o.Enum, ", ")
	case o.Min < o.Max:
		f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
		return t + " " + f(o.Min) + ".." + f(o.Max)
	}
	return t
}

package configmon

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// Arguments of the commands (Command.Args names):
//
//	config set  who=SECTION name=OPTION value=VALUE
//	config rm   who=SECTION name=OPTION
//	config get  who=SECTION [name=OPTION]
//	config dump
//	config help [name=OPTION]

// entryView is one value in JSON replies.
type entryView struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	Value   string `json:"value"`
	Runtime bool   `json:"can_update_at_runtime"`
}

// optionView is one option of the schema in JSON replies.
type optionView struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Default string   `json:"default"`
	Desc    string   `json:"desc"`
	Runtime bool     `json:"can_update_at_runtime"`
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	Enum    []string `json:"enum_values,omitempty"`
}

// args reads and checks the section and option name of a command.
func sectionAndOption(c moncmd.Command) (string, config.Option, *moncmd.Reply) {
	who, err := c.Str("who")
	if err == nil {
		err = checkSection(who)
	}
	if err != nil {
		r := moncmd.Errorf(moncmd.EINVAL, "%s: %v", c.Prefix, err)
		return "", config.Option{}, &r
	}
	name, err := c.Str("name")
	if err != nil {
		r := moncmd.FromError(err, moncmd.EINVAL)
		return "", config.Option{}, &r
	}
	o, ok := Lookup(name)
	if !ok {
		r := moncmd.Errorf(moncmd.EINVAL, "%s: unrecognized config option %q", c.Prefix, name)
		return "", config.Option{}, &r
	}
	return who, o, nil
}

func (s *Service) prepareSet(c moncmd.Command) ([]byte, moncmd.Reply) {
	who, o, bad := sectionAndOption(c)
	if bad != nil {
		return nil, *bad
	}
	raw, err := c.Str("value")
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	v, err := o.Parse(raw)
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "config set: %v", err)
	}
	note := ""
	if !o.Runtime {
		note = " (takes effect when the daemons restart)"
	}
	if cur, ok := s.db.values[entryKey{who, o.Name}]; ok && cur == v {
		return nil, moncmd.Reply{Status: fmt.Sprintf("%s %s is already %s%s", who, o.Name, v, note)}
	}
	p := proposal{base: s.db.version, op: opSet, section: who, name: o.Name, value: v}
	return p.encode(), moncmd.Reply{}
}

func (s *Service) prepareRm(c moncmd.Command) ([]byte, moncmd.Reply) {
	who, o, bad := sectionAndOption(c)
	if bad != nil {
		return nil, *bad
	}
	if _, ok := s.db.values[entryKey{who, o.Name}]; !ok {
		return nil, moncmd.Reply{Status: fmt.Sprintf("%s %s is not set", who, o.Name)}
	}
	p := proposal{base: s.db.version, op: opRm, section: who, name: o.Name}
	return p.encode(), moncmd.Reply{}
}

func (s *Service) queryGet(c moncmd.Command) moncmd.Reply {
	who, err := c.Str("who")
	if err == nil {
		err = checkSection(who)
	}
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "config get: %v", err)
	}
	if c.Has("name") {
		_, o, bad := sectionAndOption(c)
		if bad != nil {
			return *bad
		}
		v, from, _ := s.db.lookup(who, o.Name)
		return replyJSON(entryView{Section: from, Name: o.Name, Value: v, Runtime: o.Runtime}, v+"\n")
	}
	// Every value set for who, from its most specific section.
	seen := map[string]bool{}
	views := []entryView{}
	for _, sec := range sectionsFor(who) {
		for _, k := range s.db.sortedKeys() {
			if k.section != sec || seen[k.name] {
				continue
			}
			seen[k.name] = true
			o, _ := Lookup(k.name)
			views = append(views, entryView{Section: sec, Name: k.name, Value: s.db.values[k], Runtime: o.Runtime})
		}
	}
	return replyJSON(views, entryTable(views))
}

func (s *Service) queryDump(moncmd.Command) moncmd.Reply {
	views := []entryView{}
	for _, k := range s.db.sortedKeys() {
		o, _ := Lookup(k.name)
		views = append(views, entryView{Section: k.section, Name: k.name, Value: s.db.values[k], Runtime: o.Runtime})
	}
	return replyJSON(views, entryTable(views))
}

func (s *Service) queryHelp(c moncmd.Command) moncmd.Reply {
	var opts []config.Option
	if c.Has("name") {
		name := c.StrOr("name", "")
		o, ok := Lookup(name)
		if !ok {
			return moncmd.Errorf(moncmd.ENOENT, "config help: unrecognized config option %q", name)
		}
		opts = []config.Option{o}
	} else {
		opts = Schema()
	}
	views := make([]optionView, 0, len(opts))
	var b strings.Builder
	for _, o := range opts {
		v := optionView{Name: o.Name, Type: o.Type.String(), Default: o.Default, Desc: o.Desc, Runtime: o.Runtime, Enum: o.Enum}
		if o.Min < o.Max {
			v.Min, v.Max = &o.Min, &o.Max
		}
		views = append(views, v)
		fmt.Fprintf(&b, "%s (%s, default %s)", o.Name, v.Type, o.Default)
		if !o.Runtime {
			b.WriteString(" [restart]")
		}
		fmt.Fprintf(&b, "\n    %s\n", o.Desc)
	}
	if c.Has("name") {
		return replyJSON(views[0], b.String())
	}
	return replyJSON(views, b.String())
}

// entryTable formats values as "config dump" prints them: RO marks the
// options that need a restart.
func entryTable(views []entryView) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHO\tOPTION\tVALUE\tRO")
	for _, v := range views {
		ro := ""
		if !v.Runtime {
			ro = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Section, v.Name, v.Value, ro)
	}
	_ = tw.Flush()
	return b.String()
}

// replyJSON is a successful reply with v as its data.
func replyJSON(v any, text string) moncmd.Reply {
	data, err := json.Marshal(v)
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "config: encoding reply: %v", err)
	}
	return moncmd.Reply{Data: data, Text: text}
}

package cmdutil

import (
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/spf13/pflag"
)

// optionFlag is a flag that sets an option of the schema: its type, its
// default and its check are the option's, and the value is checked
// against it as it is parsed.
type optionFlag struct {
	opt   config.Option
	value string            // shown as the flag's value
	given map[string]string // option name to the canonical value given
}

func (f *optionFlag) String() string { return f.value }
func (f *optionFlag) Type() string   { return f.opt.Type.String() }
func (f *optionFlag) Set(s string) error {
	v, err := f.opt.Parse(s)
	if err != nil {
		return err
	}
	f.value, f.given[f.opt.Name] = v, v
	return nil
}

// AddOptionFlag adds o's flag to fl; the canonical value given lands in
// given under o's name.
func AddOptionFlag(fl *pflag.FlagSet, o config.Option, given map[string]string) {
	fl.Var(&optionFlag{opt: o, value: o.Default, given: given}, o.Flag, o.Desc+" (option "+o.Name+")")
}

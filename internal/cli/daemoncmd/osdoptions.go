package daemoncmd

import (
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/spf13/pflag"
)

// optionFlag is a flag that sets an option of the schema: its type, its
// default and its help come from the option, and a value given is checked
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

// addOptionFlags adds a flag for each option of the schema daemons of
// type typ read that names one; the values given land in given, which
// the daemon's config carries as its flag overrides
// (daemon.OSDConfig.Flags).
func addOptionFlags(fl *pflag.FlagSet, typ string, given map[string]string) {
	for _, o := range config.ForDaemon(typ) {
		if o.Flag == "" {
			continue
		}
		fl.Var(&optionFlag{opt: o, value: o.Default, given: given}, o.Flag, o.Desc+" (option "+o.Name+")")
	}
}

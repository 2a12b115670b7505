package daemoncmd

import (
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/spf13/pflag"
)

// addOptionFlags adds a flag for each option of the schema daemons of
// type typ read that names one; the values given land in given, which
// the daemon's config carries as its flag overrides
// (daemon.OSDConfig.Flags).
func addOptionFlags(fl *pflag.FlagSet, typ string, given map[string]string) {
	for _, o := range config.ForDaemon(typ) {
		if o.Flag == "" {
			continue
		}
		cmdutil.AddOptionFlag(fl, o, given)
	}
}

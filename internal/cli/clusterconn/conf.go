package clusterconn

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cuttlestore/cuttle/internal/config"
)

// LoadConf reads the configuration file --conf names. It returns nil
// and no error when there is nothing to read: no file named, or the
// default file (./.cuttle/cuttle.conf) unreadable while --mon-host names
// the monitors. A file the user named (--conf, or $CUTTLE_CONF through
// main) that cannot be read is the error, reported first and alone; the
// default file missing means no cluster was named at all, so the error
// says how to name one.
func (f *Flags) LoadConf() (*config.File, error) {
	if f.Conf == "" {
		return nil, nil
	}
	c, err := config.Load(f.Conf)
	if err == nil {
		return c, nil
	}
	if f.Conf == DefaultConfPath && !f.confChanged() {
		if f.MonHost != "" {
			return nil, nil
		}
		return nil, fmt.Errorf("no monitors: give --mon-host, or --conf (or $CUTTLE_CONF) with mon_host, or start a local cluster with cuttle cluster up (%w)", err)
	}
	what := "--conf " + f.Conf
	if !f.confChanged() && f.Conf == f.confDefault {
		what = "$CUTTLE_CONF " + f.Conf
	}
	cause := strings.TrimPrefix(err.Error(), f.Conf+": ") // a parse error names the file
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		cause = pe.Err.Error()
	}
	return nil, Shown(what+": "+cause, err)
}

// confChanged reports whether --conf was given on the command line.
func (f *Flags) confChanged() bool {
	fl := f.flags.Lookup("conf")
	return fl != nil && fl.Changed
}

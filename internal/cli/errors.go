package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/launcher"
	"github.com/spf13/cobra"
)

// How the CLI reports a failure (cmd/cuttle prints "cuttle: " and the
// error, and exits 1): what failed first, named once, then the cause:
//
//	cuttle: osd pool set: unrecognized pool 'nosuch' (ENOENT)
//	cuttle: --conf /nope: no such file or directory
//	cuttle: tell: osd.9 does not exist (the map at epoch 12 has osd.0-osd.2)
//
// Monitors' replies often name their command already ("auth get: unknown
// entity ..."); [named] does not name it again. Library errors keep their
// classes: every wrapper here unwraps, so errors.Is and errors.As see
// through them.

// namedError is err with what failed (a monitor command's prefix, a
// CLI command's path) in front of it, once.
type namedError struct {
	name string
	err  error
}

// named returns err with name in front of it, unless err's text starts
// with name already.
func named(name string, err error) error {
	if err == nil {
		return nil
	}
	return &namedError{name: name, err: err}
}

func (e *namedError) Error() string {
	msg := e.err.Error()
	for strings.HasPrefix(msg, e.name+": ") {
		msg = msg[len(e.name)+2:]
	}
	return e.name + ": " + msg
}

func (e *namedError) Unwrap() error { return e.err }

// shownError is err told in the CLI's words: msg is printed, err stays
// reachable for errors.Is and errors.As.
type shownError struct {
	msg string
	err error
}

func (e *shownError) Error() string { return e.msg }
func (e *shownError) Unwrap() error { return e.err }

// commandName is cmd's path without the root's name: "osd pool create".
func commandName(cmd *cobra.Command) string {
	path := cmd.CommandPath()
	if cmd.HasParent() {
		path = path[len(cmd.Root().Name())+1:]
	}
	return path
}

// nameArgErrors makes the argument and flag errors of every command under
// root name the command: "osd pool rm: accepts 2 arg(s), received 1"
// rather than cobra's bare "accepts 2 arg(s), received 1". Errors that
// name the command already (cobra.NoArgs's "unknown command ... for
// "cuttle version"") are left as they are.
func nameArgErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return nameCommandError(cmd, err)
	})
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		if args := cmd.Args; args != nil && cmd.HasParent() {
			cmd.Args = func(cmd *cobra.Command, a []string) error {
				return nameCommandError(cmd, args(cmd, a))
			}
		}
	}
	walk(root)
}

func nameCommandError(cmd *cobra.Command, err error) error {
	if err == nil || !cmd.HasParent() || strings.Contains(err.Error(), `"`+cmd.CommandPath()+`"`) {
		return err
	}
	return named(commandName(cmd), err)
}

// loadConf reads the configuration file --conf names. It returns nil
// and no error when there is nothing to read: no file named, or the
// default file (./.cuttle/cuttle.conf) unreadable while --mon-host names
// the monitors. A file the user named (--conf, or $CUTTLE_CONF through
// main) that cannot be read is the error, reported first and alone; the
// default file missing means no cluster was named at all, so the error
// says how to name one.
func (f *clusterFlags) loadConf() (*config.File, error) {
	if f.conf == "" {
		return nil, nil
	}
	c, err := config.Load(f.conf)
	if err == nil {
		return c, nil
	}
	if f.conf == DefaultConfPath && !f.confChanged() {
		if f.monHost != "" {
			return nil, nil
		}
		return nil, fmt.Errorf("no monitors: give --mon-host, or --conf (or $CUTTLE_CONF) with mon_host, or start a local cluster with cuttle cluster up (%w)", err)
	}
	what := "--conf " + f.conf
	if !f.confChanged() && f.conf == f.confDefault {
		what = "$CUTTLE_CONF " + f.conf
	}
	cause := strings.TrimPrefix(err.Error(), f.conf+": ") // a parse error names the file
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		cause = pe.Err.Error()
	}
	return nil, &shownError{msg: what + ": " + cause, err: err}
}

// confChanged reports whether --conf was given on the command line.
func (f *clusterFlags) confChanged() bool {
	fl := f.flags.Lookup("conf")
	return fl != nil && fl.Changed
}

// launcherError names the cluster command that failed in front of a
// launcher error, telling a directory without a cluster in the CLI's
// words rather than through the launcher's package prefix.
func launcherError(name, dir string, err error) error {
	if errors.Is(err, launcher.ErrNoCluster) {
		err = &shownError{msg: fmt.Sprintf("no cluster in %s (start one with cuttle cluster up)", dir), err: err}
	}
	return named(name, err)
}

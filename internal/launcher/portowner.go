package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// portUser says who holds a port a daemon of the cluster in dir needs,
// for the message that refuses to start it: a daemon of another Cuttle
// cluster is named with that cluster's directory (so that two local
// clusters on one base port are told apart), a daemon of this cluster
// that its pid file does not name is told as such, and anything else is
// "another program", with its pid and command line when the system
// tells them (Linux: the listening socket's owner in /proc).
func portUser(hostport, dir string) string {
	pid := listenerPID(hostport)
	if pid <= 0 {
		return "another program"
	}
	args := procArgs(pid)
	name, cdir, ok := cuttleDaemon(args)
	switch {
	case ok && cdir == dir:
		return fmt.Sprintf("%s of this cluster (pid %d), which its pid file does not name: stop it (kill %d) and run up again", name, pid, pid)
	case ok && isCluster(cdir):
		return fmt.Sprintf("%s of the Cuttle cluster in %s (pid %d): stop that one (cuttle cluster down --dir %s), or give this one other ports by making it afresh with --base-port",
			name, cdir, pid, cdir)
	case ok:
		return fmt.Sprintf("a Cuttle %s with its data in %s (pid %d)", name, filepath.Join(cdir, name), pid)
	case len(args) > 0:
		return fmt.Sprintf("another program (pid %d: %s)", pid, strings.Join(args, " "))
	}
	return fmt.Sprintf("another program (pid %d)", pid)
}

// cuttleDaemon recognises the command line of a Cuttle daemon (cuttle
// mon run or osd run with --data DIR/NAME, as the launcher starts them)
// and returns the daemon's name (the data directory's) and its cluster's
// directory.
func cuttleDaemon(args []string) (name, dir string, ok bool) {
	i := slices.Index(args, "run")
	if i < 1 || (args[i-1] != "mon" && args[i-1] != "osd") {
		return "", "", false
	}
	for j := i + 1; j < len(args); j++ {
		data, found := strings.CutPrefix(args[j], "--data=")
		if !found && args[j] == "--data" && j+1 < len(args) {
			data, found = args[j+1], true
		}
		if found && data != "" {
			data = filepath.Clean(data)
			return filepath.Base(data), filepath.Dir(data), true
		}
	}
	return "", "", false
}

// isCluster reports whether dir holds a launcher's cluster record.
func isCluster(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, recordFile))
	return err == nil
}

package cli

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/launcher"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// packageNames lists the module's package names (internal/wire is
// "wire"): a message segment that is one of them is a package prefix
// chained into a message meant for people.
func packageNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, dir := range []string{"..", filepath.Join("..", "..")} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && e.Name() != "internal" && e.Name() != "cmd" && !strings.HasPrefix(e.Name(), ".") {
				names[e.Name()] = true
			}
		}
	}
	if !names["wire"] || !names["rados"] || !names["launcher"] {
		t.Fatalf("package names: %v", names)
	}
	return names
}

// checkNamedOnce fails if an error line says a thing twice: a ": "
// separated segment repeated (the command named by the CLI and again by
// the monitor's reply, "osd pool create: osd pool create: ..."), or a
// segment that is a bare package name ("launcher: no cluster").
func checkNamedOnce(t *testing.T, pkgs map[string]bool, line string) {
	t.Helper()
	seen := map[string]bool{}
	for _, seg := range strings.Split(strings.TrimPrefix(line, "cuttle: "), ": ") {
		seg = strings.TrimSpace(seg)
		if seen[seg] {
			t.Errorf("%q says %q twice", line, seg)
		}
		seen[seg] = true
		if pkgs[seg] {
			t.Errorf("%q names the package %q", line, seg)
		}
	}
}

// Issue 35: errors say the cause first and once. Representative failing
// commands, run as processes against a real cluster, print one line
// "cuttle: WHAT: CAUSE" that repeats nothing, and exit 1.
func TestErrorMessagesOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2")
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "256M"); err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	conf := filepath.Join(dir, "cuttle.conf")
	tmp := t.TempDir()
	pkgs := packageNames(t)
	for _, tc := range []struct {
		args []string
		want string // the whole line after "cuttle: ", up to its end or to "..."
	}{
		{[]string{"osd", "pool", "create", "rbd", "8"}, "osd pool create: pool 'rbd' already exists with other settings (EEXIST)"},
		{[]string{"osd", "pool", "create", "p", "abc"}, `osd pool create: "pg_num" is not an integer: "abc" (EINVAL)`},
		{[]string{"osd", "pool", "set", "rbd", "size", "99"}, "osd pool set: pool 'rbd': size 99 out of [1, 10] (EINVAL)"},
		{[]string{"osd", "pool", "set", "rbd", "bogus", "1"}, `osd pool set: unknown variable "bogus" ...`},
		{[]string{"osd", "pool", "set", "nosuch", "size", "2"}, "osd pool set: unrecognized pool 'nosuch' (ENOENT)"},
		{[]string{"osd", "pool", "rm", "nosuch"}, "osd pool rm: accepts 2 arg(s), received 1"},
		{[]string{"osd", "out", "abc"}, `osd out: "abc" is not an osd id (EINVAL)`},
		{[]string{"osd", "set", "bogusflag"}, `osd set: unknown flag "bogusflag" (EINVAL)`},
		{[]string{"osd", "reweight", "9", "0.5"}, "osd reweight: osd.9 does not exist (ENOENT)"},
		{[]string{"osd", "dump", "--bogus"}, "osd dump: unknown flag: --bogus"},
		{[]string{"osd", "getmap", "999", "-o", filepath.Join(tmp, "m")}, `osd getmap: no epoch "999" ...`},
		{[]string{"osd", "getmap", "-o", filepath.Join(tmp, "no", "m")}, "osd getmap: open " + filepath.Join(tmp, "no", "m") + ": no such file or directory"},
		{[]string{"auth", "get", "client.nosuch"}, "auth get: unknown entity client.nosuch (ENOENT)"},
		{[]string{"config", "set", "osd", "bogus_opt", "1"}, `config set: unrecognized config option "bogus_opt" (EINVAL)`},
		{[]string{"pg", "query", "9.9"}, "pg query: pg 9.9 does not exist (ENOENT)"},
		{[]string{"pg", "query", "bad"}, `pg query: "bad" is not a pg id ...`},
		{[]string{"tell", "osd.9", "status"}, "tell: osd.9 does not exist (the map at epoch ..."},
		{[]string{"rados", "-p", "rbd", "stat", "nosuch"}, "stat rbd/nosuch: no such object"},
		{[]string{"cluster", "down", "--dir", filepath.Join(tmp, "none")}, "cluster down: no cluster in " + filepath.Join(tmp, "none") + " (start one with cuttle cluster up)"},
	} {
		args := append([]string{"--conf", conf}, tc.args...)
		stdout, stderr, err := cuttleProc(t, args...)
		name := strings.Join(tc.args, " ")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%s: %v (want exit status 1), stdout %q", name, err, stdout)
		}
		line, rest, _ := strings.Cut(stderr, "\n")
		if rest != "" {
			t.Errorf("%s: more than one line on stderr: %q", name, stderr)
		}
		got, ok := strings.CutPrefix(line, "cuttle: ")
		want, prefix := strings.CutSuffix(tc.want, "...")
		if !ok || (prefix && !strings.HasPrefix(got, want)) || (!prefix && got != want) {
			t.Errorf("%s:\n got %q\nwant %q", name, line, "cuttle: "+tc.want)
		}
		checkNamedOnce(t, pkgs, line)
	}
	// The success line of osd getmap says what it got once.
	_, stderr, err := cuttleProc(t, "--conf", conf, "osd", "getmap", "-o", filepath.Join(tmp, "m"))
	if err != nil || strings.Count(stderr, "osdmap") != 1 || !strings.Contains(stderr, "bytes to "+filepath.Join(tmp, "m")) {
		t.Errorf("osd getmap: %v, stderr %q", err, stderr)
	}

	// In process: the errors keep their classes for errors.Is and As.
	_, _, err = run(t, "--conf", conf, "osd", "pool", "create", "rbd", "8")
	if we := (*wire.Error)(nil); !errors.As(err, &we) || we.Code != wire.EEXIST {
		t.Errorf("pool create rbd: %v is not EEXIST", err)
	}
	_, _, err = run(t, "--conf", conf, "tell", "osd.9", "status")
	if !errors.Is(err, rados.ErrNotFound) {
		t.Errorf("tell osd.9: %v is not rados.ErrNotFound", err)
	}
	_, _, err = run(t, "cluster", "down", "--dir", filepath.Join(tmp, "none"))
	if !errors.Is(err, launcher.ErrNoCluster) {
		t.Errorf("cluster down: %v is not launcher.ErrNoCluster", err)
	}
}

// Issue 35: a --conf (or $CUTTLE_CONF) that cannot be read is the error,
// first and alone; only the default file missing asks for monitors.
func TestConfErrors(t *testing.T) {
	nope := filepath.Join(t.TempDir(), "nope")
	pkgs := packageNames(t)
	for _, tc := range []struct {
		defaultConf string
		args        []string
		want        string
	}{
		{"", []string{"--conf", nope, "status"}, "--conf " + nope + ": no such file or directory"},
		{"", []string{"--conf", nope, "--mon-host", "a=127.0.0.1:1", "status"}, "--conf " + nope + ": no such file or directory"},
		{"", []string{"--conf", nope, "rados", "-p", "rbd", "ls"}, "--conf " + nope + ": no such file or directory"},
		{"", []string{"--conf", nope, "tell", "osd.0", "status"}, "--conf " + nope + ": no such file or directory"},
		{nope, []string{"status"}, "$CUTTLE_CONF " + nope + ": no such file or directory"},
		{nope, []string{"--conf", nope, "status"}, "--conf " + nope + ": no such file or directory"},
		{"", []string{"--conf", ".", "status"}, "--conf .: is a directory"},
	} {
		var stdout, stderr bytes.Buffer
		root := NewRootCommandConf(&stdout, &stderr, tc.defaultConf)
		root.SetArgs(tc.args)
		err := root.ExecuteContext(context.Background())
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v (default %q): %v, want %q", tc.args, tc.defaultConf, err, tc.want)
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) && !strings.HasSuffix(tc.want, "is a directory") {
			t.Errorf("%v: %v is not fs.ErrNotExist", tc.args, err)
		}
		checkNamedOnce(t, pkgs, err.Error())
	}
	// The default file absent is TestDefaultConfIsLocalCluster.
}

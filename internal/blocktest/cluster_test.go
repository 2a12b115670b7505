package blocktest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// needTools skips a test without the named programs only when not root;
// as root (make test, CI) they are installed (the Makefile's TEST_TOOLS),
// so their absence fails.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Geteuid() != 0 {
				t.Skipf("%s is not installed (apt-get install qemu-utils libnbd-bin fio e2fsprogs fuse3, or make deps as root)", tool)
			}
			t.Fatalf("%s is not installed: make deps installs it", tool)
		}
	}
}

// cluster is one monitor and three OSD processes that `cuttle cluster up`
// started in a directory of the test's, with pool rbd of three copies.
type cluster struct {
	t    *testing.T
	dir  string
	conf string
}

// upCluster starts a cluster and stops it (cluster down) when the test
// ends, first failing the test if a daemon's log reports a data race,
// and printing the end of each log if the test failed. The ports are
// below Linux's ephemeral range and apart from internal/cli's (20000 on);
// up skips any that are taken.
func upCluster(t *testing.T) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	c := &cluster{t: t, dir: filepath.Join(t.TempDir(), "c")}
	c.conf = filepath.Join(c.dir, "cuttle.conf")
	base := fmt.Sprint(12000 + rand.IntN(32)*250)
	t.Cleanup(func() {
		if out, err := c.cuttle(context.Background(), "cluster", "down", "--dir", c.dir); err != nil {
			t.Logf("cluster down: %v\n%s", err, out)
		}
		logs, _ := filepath.Glob(filepath.Join(c.dir, "log", "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			if bytes.Contains(b, []byte("WARNING: DATA RACE")) {
				t.Errorf("%s reports a data race:\n%s", filepath.Base(l), b)
			} else if t.Failed() {
				t.Logf("%s:\n%s", filepath.Base(l), lastLines(string(b), 25))
			}
		}
	})
	if out, err := c.cuttle(context.Background(), "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", c.dir, "--base-port", base, "--osds", "3", "--osd-size", "256M"); err != nil {
		t.Fatalf("cluster up: %v\n%s", err, out)
	}
	return c
}

// cuttle runs the binary with args and returns its output (stdout and
// stderr together).
func (c *cluster) cuttle(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, theEnv.cuttle, args...).CombinedOutput()
	return string(out), err
}

// cli runs a command against the cluster and returns its stdout, failing
// the test if it fails.
func (c *cluster) cli(args ...string) string {
	c.t.Helper()
	out, err := c.try(args...)
	if err != nil {
		c.t.Fatalf("cuttle %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// try runs a command against the cluster; its error carries stderr.
func (c *cluster) try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, theEnv.cuttle, append([]string{"--conf", c.conf}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// pid returns the process of a daemon (e.g. "osd.1") that cluster status
// reports running.
func (c *cluster) pid(name string) int {
	c.t.Helper()
	out, err := c.cuttle(context.Background(), "--format", "json", "cluster", "status", "--dir", c.dir)
	if err != nil {
		c.t.Fatalf("cluster status: %v\n%s", err, out)
	}
	var st struct {
		Daemons []struct {
			Name  string `json:"name"`
			PID   int    `json:"pid"`
			State string `json:"state"`
		} `json:"daemons"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		c.t.Fatalf("cluster status: %v\n%s", err, out)
	}
	for _, d := range st.Daemons {
		if d.Name == name && d.State == "running" {
			return d.PID
		}
	}
	c.t.Fatalf("%s is not running:\n%s", name, out)
	return 0
}

// kill sends SIGKILL to a daemon and returns once the process is gone
// (so that cluster up sees it stopped). The daemon is not this test's
// child: it polls for the process, every 10 ms.
func (c *cluster) kill(name string) {
	c.t.Helper()
	pid := c.pid(name)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for syscall.Kill(pid, 0) == nil {
		select {
		case <-tick.C:
		case <-deadline:
			c.t.Fatalf("%s (pid %d) still there a minute after SIGKILL", name, pid)
		}
	}
}

// restartAsync runs restart on a goroutine; the channel has its result.
func (c *cluster) restartAsync() <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- c.restart() }()
	return ch
}

// restart runs cluster up again, which starts what has stopped and waits
// until every OSD is up and every PG active. It returns the error for
// callers on other goroutines.
func (c *cluster) restart() error {
	if out, err := c.cuttle(context.Background(), "cluster", "up", "--dir", c.dir); err != nil {
		return fmt.Errorf("cluster up after a kill: %w\n%s", err, out)
	}
	return nil
}

// waitFor polls cond (every 100 ms) until it holds, failing after a
// minute.
func (c *cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("still waiting for %s", what)
		}
		<-tick.C
	}
}

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// server is a `cuttle nbd serve` process listening on a Unix socket.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	sock   string
	stderr *lockedBuffer
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

// uri is the nbd+unix URI of an export of s.
func (s *server) uri(export string) string { return "nbd+unix:///" + export + "?socket=" + s.sock }

// serve starts `cuttle nbd serve` with args (images and flags) and
// returns once it has printed its startup line. The test's end kills it
// if it still runs, and fails the test if its log reports a data race.
func (c *cluster) serve(args ...string) *server {
	c.t.Helper()
	s := &server{t: c.t, sock: filepath.Join(c.t.TempDir(), "nbd.sock"), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(theEnv.cuttle, append([]string{"--conf", c.conf, "--format", "json", "nbd", "serve", "--listen", "unix://" + s.sock}, args...)...)
	s.cmd.Stderr = s.stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	started := make(chan error, 1)
	go func() {
		var st struct {
			Listen []string `json:"listen"`
		}
		err := json.NewDecoder(stdout).Decode(&st)
		if err == nil && (len(st.Listen) != 1 || st.Listen[0] != "unix://"+s.sock) {
			err = fmt.Errorf("startup line listens on %v", st.Listen)
		}
		started <- err
		_, _ = io.Copy(io.Discard, stdout)
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	c.t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		if strings.Contains(s.stderr.String(), "WARNING: DATA RACE") {
			c.t.Errorf("nbd serve reports a data race:\n%s", s.stderr.String())
		}
	})
	if err := <-started; err != nil {
		c.t.Fatalf("nbd serve %s: %v\n%s", strings.Join(args, " "), err, s.stderr.String())
	}
	return s
}

// stop sends SIGTERM and wants a clean exit: every export flushed.
func (s *server) stop() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	<-s.exited
	if s.err != nil || !strings.Contains(s.stderr.String(), "every export flushed") {
		s.t.Fatalf("nbd serve after SIGTERM: %v\n%s", s.err, s.stderr.String())
	}
}

// kill sends SIGKILL and waits for the process to end.
func (s *server) kill() {
	s.t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		s.t.Fatal(err)
	}
	<-s.exited
}

// tool runs a program and returns its output; it fails the test if the
// program fails.
func tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := toolErr(name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func toolErr(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// scanLines calls f for each line of r until r ends.
func scanLines(r io.Reader, f func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		f(sc.Text())
	}
}

package cli

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// `cuttle nbd serve` as a process of its own against a cluster that
// cluster up started: its JSON startup line, nbdcopy into the export,
// cuttle nbd ls, SIGTERM (exit 0 once flushed, the socket removed), and
// a second, read-only server that reads back what the first wrote.
func TestNBDClusterUp(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	if _, err := exec.LookPath("nbdcopy"); err != nil {
		if os.Geteuid() != 0 {
			t.Skip("nbdcopy is not installed (apt-get install libnbd-bin)")
		}
		t.Fatal("nbdcopy is not installed: make deps installs it")
	}
	c := upLocalCluster(t)
	c.cli("rbd", "create", "disk", "--size", "16M", "--object-size", "1M")
	dir := t.TempDir()
	data := make([]byte, 16<<20)
	rng := rand.New(rand.NewPCG(4, 4))
	for i := 3 << 20; i < 5<<20; i++ {
		data[i] = byte(rng.Uint32())
	}
	in := filepath.Join(dir, "in.raw")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}

	// serve starts a server process and returns it, its socket and
	// stderr once it has printed its startup line.
	serve := func(args ...string) (*exec.Cmd, string, *bytes.Buffer) {
		t.Helper()
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(t.TempDir(), "nbd.sock")
		cmd := exec.Command(exe, append([]string{"--conf", c.conf, "--format", "json", "nbd", "serve", "--listen", "unix://" + sock}, args...)...)
		cmd.Env = append(os.Environ(), daemonEnv+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		var st struct {
			Exports []struct {
				Name     string `json:"name"`
				ReadOnly bool   `json:"read_only"`
			} `json:"exports"`
			Listen []string `json:"listen"`
		}
		if err := json.NewDecoder(stdout).Decode(&st); err != nil {
			_ = cmd.Wait()
			t.Fatalf("startup line: %v\n%s", err, stderr.String())
		}
		if len(st.Exports) != 1 || st.Exports[0].Name != "disk" || len(st.Listen) != 1 || st.Listen[0] != "unix://"+sock {
			t.Fatalf("startup line %+v", st)
		}
		return cmd, sock, &stderr
	}
	// stop sends SIGTERM and wants a clean exit.
	stop := func(cmd *exec.Cmd, sock string, stderr *bytes.Buffer) {
		t.Helper()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("nbd serve after SIGTERM: %v\n%s", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "every export flushed") {
			t.Fatalf("nbd serve's log:\n%s", stderr.String())
		}
		if _, err := os.Stat(sock); !os.IsNotExist(err) {
			t.Fatalf("the socket is left behind: %v", err)
		}
	}

	cmd, sock, stderr := serve("disk")
	uri := "nbd+unix:///disk?socket=" + sock
	if out, err := exec.Command("nbdcopy", in, uri).CombinedOutput(); err != nil {
		t.Fatalf("nbdcopy in: %v\n%s", err, out)
	}
	if ls := c.cli("nbd", "ls", "--connect", "unix://"+sock); !strings.Contains(ls, "16 MiB rw rbd/disk") {
		t.Fatalf("nbd ls: %q", ls)
	}
	stop(cmd, sock, stderr)
	// Only the written objects exist: nbdcopy skipped the zeros.
	if objs := strings.Count(c.cli("rados", "-p", "rbd", "ls"), "rbd_data."); objs != 2 {
		t.Fatalf("%d data objects after copying 2 MiB of data in 1 MiB objects, want 2", objs)
	}

	cmd, sock, stderr = serve("disk", "--read-only")
	out := filepath.Join(dir, "out.raw")
	if b, err := exec.Command("nbdcopy", "nbd+unix:///disk?socket="+sock, out).CombinedOutput(); err != nil {
		t.Fatalf("nbdcopy out: %v\n%s", err, b)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back through a second server: %v", err)
	}
	stop(cmd, sock, stderr)
}

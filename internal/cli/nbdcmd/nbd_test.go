package nbdcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/rbd"
)

func TestParseListen(t *testing.T) {
	for in, want := range map[string]string{
		"tcp://127.0.0.1:1234": "tcp://127.0.0.1:1234",
		"tcp://localhost":      "tcp://localhost:10809",
		"127.0.0.1:99":         "tcp://127.0.0.1:99",
		"tcp://[::1]":          "tcp://[::1]:10809",
		"unix:///run/x.sock":   "unix:///run/x.sock",
	} {
		got, err := parseListen(in)
		if err != nil || got.String() != want {
			t.Errorf("parseListen(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"unix://relative/x", "http://x:1", "tcp://", "tcp://h:1/path"} {
		if _, err := parseListen(bad); err == nil || !strings.HasSuffix(err.Error(), "(EINVAL)") {
			t.Errorf("parseListen(%q): %v", bad, err)
		}
	}
}

func TestParseSpec(t *testing.T) {
	for in, want := range map[string]spec{
		"disk":        {pool: "rbd", image: "disk"},
		"p/disk@snap": {pool: "p", image: "disk", snap: "snap"},
	} {
		if got, err := parseSpec(in); err != nil || got != want {
			t.Errorf("parseSpec(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"p/", "/x", "p/a/b", "disk@"} {
		if _, err := parseSpec(bad); err == nil {
			t.Errorf("parseSpec(%q) succeeded", bad)
		}
	}
}

// cluster starts a monitor and three OSDs on loopback TCP (real time:
// the NBD clients are other processes) with images disk (4 MiB, with a
// snapshot "s") and other.
func cluster(t *testing.T) (DialFunc, *rbd.Pool) {
	c := sim.New(t, sim.Options{TCP: true})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "2")
	c.WaitForEpoch(c.Epoch())
	p, err := rbd.NewPool(c.Client("client.test"), "rbd", rbd.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"disk", "other"} {
		if err := p.Create(ctx, name, 4<<20, rbd.CreateOptions{Order: 20}); err != nil {
			t.Fatal(err)
		}
	}
	img, err := p.Open(ctx, "disk", rbd.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := img.SnapCreate(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	// Connections made beforehand: the commands run on other goroutines,
	// where a test may not fail.
	conns := make(chan *rados.Conn, 8)
	for range cap(conns) {
		conns <- c.Client("client.nbd")
	}
	return func(context.Context) (*rados.Conn, error) { return <-conns, nil }, p
}

// command runs "cuttle nbd args..." with JSON output into w.
func command(ctx context.Context, dial DialFunc, w io.Writer, args ...string) error {
	out := &cmdutil.Output{Format: cmdutil.FormatJSON, W: w}
	root := &cobra.Command{Use: "cuttle", SilenceUsage: true, SilenceErrors: true}
	AddNBDCommands(root, out, dial)
	root.SetOut(w)
	root.SetErr(io.Discard)
	root.SetArgs(append([]string{"nbd"}, args...))
	return root.ExecuteContext(ctx)
}

// startServe starts "cuttle nbd serve args..." and returns its startup line
// and a stop function (the SIGTERM of the binary: its context ends) that
// returns the command's error.
func startServe(t *testing.T, dial DialFunc, args ...string) (startup, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := command(ctx, dial, pw, append([]string{"serve"}, args...)...)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	var st startup
	if err := json.NewDecoder(pr).Decode(&st); err != nil {
		cancel()
		t.Fatalf("startup line: %v (serve: %v)", err, <-done)
	}
	go io.Copy(io.Discard, pr)
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { _ = stop() })
	return st, stop
}

// `cuttle nbd serve` on TCP and a Unix socket: its startup line, nbd ls,
// writes through qemu-io that are in the image after SIGTERM, and the
// snapshot read-only.
func TestServe(t *testing.T) {
	for _, tool := range []string{"qemu-io", "nbdinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Geteuid() != 0 {
				t.Skipf("%s is not installed (apt-get install qemu-utils libnbd-bin)", tool)
			}
			t.Fatalf("%s is not installed: make deps installs it", tool)
		}
	}
	dial, p := cluster(t)
	sock := filepath.Join(t.TempDir(), "nbd.sock")
	st, stop := startServe(t, dial, "rbd/disk", "disk@s", "--name", "vm", "--name", "vm-snap",
		"--listen", "tcp://127.0.0.1:0", "--listen", "unix://"+sock)
	want := []exportReport{{Name: "vm", Image: "rbd/disk", Size: 4 << 20}, {Name: "vm-snap", Image: "rbd/disk@s", Size: 4 << 20, ReadOnly: true}}
	if len(st.Exports) != 2 || st.Exports[0] != want[0] || st.Exports[1] != want[1] || len(st.Listen) != 2 ||
		!strings.HasPrefix(st.Listen[0], "tcp://127.0.0.1:") || st.Listen[1] != "unix://"+sock {
		t.Fatalf("startup %+v", st)
	}
	tcp := strings.TrimPrefix(st.Listen[0], "tcp://")

	var ls bytes.Buffer
	if err := command(context.Background(), dial, &ls, "ls", "--connect", "unix://"+sock); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(ls.String()), " "); !strings.Contains(got, `"name": "vm", "description": "rbd/disk", "size": 4194304, "read_only": false`) ||
		!strings.Contains(got, `"name": "vm-snap", "description": "rbd/disk@s", "size": 4194304, "read_only": true`) {
		t.Fatalf("nbd ls: %s", ls.String())
	}
	if out, err := exec.Command("qemu-io", "-f", "raw", "-c", "write -P 0x5a 1M 64k", "-c", "flush", "nbd://"+tcp+"/vm").CombinedOutput(); err != nil {
		t.Fatalf("qemu-io: %v\n%s", err, out)
	}
	if out, err := exec.Command("qemu-io", "-f", "raw", "-c", "write 0 512", "nbd+unix:///vm-snap?socket="+sock).CombinedOutput(); err == nil {
		t.Fatalf("qemu-io wrote to the snapshot's export:\n%s", out)
	}
	if out, err := exec.Command("nbdinfo", "--map", "nbd://"+tcp+"/vm").CombinedOutput(); err != nil || !strings.Contains(strings.Join(strings.Fields(string(out)), " "), "1048576 65536 0 data") {
		t.Fatalf("nbdinfo --map: %v\n%s", err, out)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("the Unix socket is left behind: %v", err)
	}
	img, err := p.Open(context.Background(), "disk", rbd.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	if err := img.ReadAt(context.Background(), buf, 1<<20); err != nil || !bytes.Equal(buf, bytes.Repeat([]byte{0x5a}, len(buf))) {
		t.Fatalf("the image after serve: %v", err)
	}
}

// --all exports every image of a pool; the refusals people meet.
func TestServeAllAndRefusals(t *testing.T) {
	dial, _ := cluster(t)
	st, stop := startServe(t, dial, "--all", "rbd", "--read-only", "--listen", "tcp://127.0.0.1:0")
	if len(st.Exports) != 2 || st.Exports[0].Name != "disk" || st.Exports[1].Name != "other" || !st.Exports[0].ReadOnly || !st.Exports[1].ReadOnly {
		t.Fatalf("startup %+v", st)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "name the images to export, or --all POOL (EINVAL)"},
		{[]string{"nope"}, `no image "nope" in pool "rbd" (ENOENT)`},
		{[]string{"disk@nope"}, `has no snapshot "nope" (ENOENT)`},
		{[]string{"disk", "rbd/disk"}, `would both be export "disk": name them apart with --name (EINVAL)`},
		{[]string{"disk", "--name", "a", "--name", "b"}, "2 --name for 1 images"},
		{[]string{"disk", "--listen", "ftp://x"}, "the scheme is tcp:// or unix:// (EINVAL)"},
	} {
		err := command(context.Background(), dial, io.Discard, append([]string{"serve"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v; want an error with %q", tc.args, err, tc.want)
		}
	}
	err := command(context.Background(), dial, io.Discard, "ls", "--connect", "unix://"+filepath.Join(t.TempDir(), "none"))
	if err == nil || !strings.Contains(err.Error(), "is cuttle nbd serve running there? (ECONNREFUSED)") {
		t.Errorf("ls of no server: %v", err)
	}
}

// makeCerts makes a CA, a server certificate for localhost and
// 127.0.0.1 and a client certificate in dir by running the openssl lines
// of docs/NBD.md's TLS section, so that they are known to work; the
// files have the names qemu and libnbd look for (ca-cert.pem,
// client-cert.pem, client-key.pem).
func makeCerts(t *testing.T, dir string) {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/NBD.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(doc), "\\\n", " ")
	n, code := 0, false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			code = !code
		}
		args := strings.Fields(line)
		if !code || len(args) == 0 || args[0] != "openssl" {
			continue
		}
		cmd := exec.Command("openssl", args[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		n++
	}
	if n != 5 {
		t.Fatalf("docs/NBD.md has %d openssl lines, want 5 (a CA, a server's and a client's certificate)", n)
	}
}

// `cuttle nbd serve --tls-cert --tls-key --tls-ca`: TLS required with
// client certificates; nbd ls and nbdinfo with certificates list it over
// TCP and a Unix socket, and without TLS or a client certificate are
// refused with what to do; --tls optional serves both; the flags'
// refusals.
func TestServeTLS(t *testing.T) {
	needTools(t, "openssl", "nbdinfo")
	dial, _ := cluster(t)
	certs := t.TempDir()
	makeCerts(t, certs)
	f := func(name string) string { return filepath.Join(certs, name) }
	sock := filepath.Join(t.TempDir(), "nbd.sock")
	st, stop := startServe(t, dial, "disk", "--listen", "tcp://127.0.0.1:0", "--listen", "unix://"+sock,
		"--tls-cert", f("server-cert.pem"), "--tls-key", f("server-key.pem"), "--tls-ca", f("ca-cert.pem"))
	if st.TLS != "require" || !st.ClientCerts || len(st.Listen) != 2 {
		t.Fatalf("startup %+v", st)
	}
	tcp := strings.TrimPrefix(st.Listen[0], "tcp://")
	client := []string{"--tls-ca", f("ca-cert.pem"), "--tls-cert", f("client-cert.pem"), "--tls-key", f("client-key.pem")}
	for _, at := range []string{"unix://" + sock, st.Listen[0]} {
		var ls bytes.Buffer
		if err := command(context.Background(), dial, &ls, append([]string{"ls", "--connect", at, "--tls"}, client...)...); err != nil {
			t.Fatalf("ls over TLS at %s: %v", at, err)
		}
		if !strings.Contains(ls.String(), `"name": "disk"`) {
			t.Fatalf("ls over TLS at %s: %s", at, ls.String())
		}
	}
	if out, err := exec.Command("nbdinfo", "nbds://"+tcp+"/disk?tls-certificates="+certs).CombinedOutput(); err != nil || !strings.Contains(string(out), "export-size: 4194304") {
		t.Fatalf("nbdinfo over TLS: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ls", "--connect", st.Listen[0]}, "the server requires TLS"},
		{[]string{"ls", "--connect", st.Listen[0], "--tls-ca", f("ca-cert.pem")}, "does it want a client certificate (--tls-cert, --tls-key)? (EACCES)"},
		{[]string{"ls", "--connect", st.Listen[0], "--tls"}, "--tls-ca FILE names the CA that signed the server's certificate (EACCES)"},
		{append([]string{"ls", "--connect", st.Listen[0], "--tls-hostname", "elsewhere"}, client...), "--tls-hostname NAME names the server as its certificate does (EACCES)"},
	} {
		err := command(context.Background(), dial, io.Discard, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want an error with %q", tc.args, err, tc.want)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	st, stop = startServe(t, dial, "disk", "--listen", "tcp://127.0.0.1:0", "--tls", "optional",
		"--tls-cert", f("server-cert.pem"), "--tls-key", f("server-key.pem"))
	if st.TLS != "optional" || st.ClientCerts {
		t.Fatalf("startup %+v", st)
	}
	for _, args := range [][]string{{}, {"--tls-ca", f("ca-cert.pem")}} {
		if err := command(context.Background(), dial, io.Discard, append([]string{"ls", "--connect", st.Listen[0]}, args...)...); err != nil {
			t.Errorf("ls %v of a TLS-optional server: %v", args, err)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	st, stop = startServe(t, dial, "disk", "--listen", "tcp://127.0.0.1:0")
	if st.TLS != "off" {
		t.Fatalf("startup %+v", st)
	}
	if err := command(context.Background(), dial, io.Discard, "ls", "--connect", st.Listen[0], "--tls"); err == nil || !strings.Contains(err.Error(), "drop --tls to list it in plain text (EPROTO)") {
		t.Errorf("ls --tls of a server without TLS: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls", "require"}, "--tls require needs --tls-cert FILE and --tls-key FILE"},
		{[]string{"--tls", "off", "--tls-cert", f("server-cert.pem"), "--tls-key", f("server-key.pem")}, "drop one or the other (EINVAL)"},
		{[]string{"--tls", "maybe", "--tls-cert", f("server-cert.pem")}, `--tls "maybe": want require, optional or off (EINVAL)`},
		{[]string{"--tls-cert", f("nope.pem"), "--tls-key", f("server-key.pem")}, "(ENOENT)"},
		{[]string{"--tls-cert", f("server-cert.pem"), "--tls-key", f("client-key.pem")}, "(EINVAL)"},
	} {
		err := command(context.Background(), dial, io.Discard, append([]string{"serve", "disk"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v; want an error with %q", tc.args, err, tc.want)
		}
	}
}

// needTools skips a test without the named programs only when not root
// (as root, make deps installs them: their absence fails).
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Geteuid() != 0 {
				t.Skipf("%s is not installed (apt-get install it, or make deps as root)", tool)
			}
			t.Fatalf("%s is not installed: make deps installs it", tool)
		}
	}
}

// `cuttle nbd serve --cache`: qemu-io's writes (one before its first
// flush, so written through; one after, cached) are in the block status
// map at once and in the image after SIGTERM, which flushes.
func TestServeCache(t *testing.T) {
	needTools(t, "qemu-io", "nbdinfo")
	dial, p := cluster(t)
	st, stop := startServe(t, dial, "rbd/disk", "--cache", "--listen", "tcp://127.0.0.1:0")
	url := "nbd://" + strings.TrimPrefix(st.Listen[0], "tcp://") + "/disk"
	if out, err := exec.Command("qemu-io", "-f", "raw", "-c", "write -P 0x11 0 64k", "-c", "flush", "-c", "write -P 0x22 1M 64k", url).CombinedOutput(); err != nil {
		t.Fatalf("qemu-io: %v\n%s", err, out)
	}
	if out, err := exec.Command("nbdinfo", "--map", url).CombinedOutput(); err != nil ||
		!strings.Contains(strings.Join(strings.Fields(string(out)), " "), "1048576 65536 0 data") {
		t.Fatalf("nbdinfo --map: %v\n%s", err, out)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	img, err := p.Open(context.Background(), "disk", rbd.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for off, b := range map[uint64]byte{0: 0x11, 1 << 20: 0x22} {
		if err := img.ReadAt(context.Background(), buf, off); err != nil || !bytes.Equal(buf, bytes.Repeat([]byte{b}, len(buf))) {
			t.Fatalf("the image at %d after serve: %v", off, err)
		}
	}
}

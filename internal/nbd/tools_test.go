package nbd_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/nbd"
	"github.com/cuttlestore/cuttle/internal/nbd/proto"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rbd"
)

const mib = 1 << 20

// needTools skips a test without the named programs only when not root;
// as root (make test, CI) they are installed (the Makefile's TEST_TOOLS),
// so their absence fails.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Geteuid() != 0 {
				t.Skipf("%s is not installed (apt-get install qemu-utils libnbd-bin, or make deps as root)", tool)
			}
			t.Fatalf("%s is not installed: make deps installs it", tool)
		}
	}
}

// rbdCluster starts a monitor and three OSDs on loopback TCP, in real
// time (the tools are other processes), and returns the images of pool
// rbd.
func rbdCluster(t *testing.T) (*sim.Cluster, *rbd.Pool) {
	t.Helper()
	c := sim.New(t, sim.Options{TCP: true})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "rbd", "pg_num", "16", "size", "3")
	c.WaitForEpoch(c.Epoch())
	p, err := rbd.NewPool(c.Client("client.nbd"), "rbd", rbd.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, p
}

func open(t *testing.T, p *rbd.Pool, name string, o rbd.OpenOptions) *rbd.Image {
	t.Helper()
	img, err := p.Open(context.Background(), name, o)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// serveExports serves exports on a loopback TCP port and a Unix socket
// and returns their addresses.
func serveExports(t *testing.T, exports ...nbd.Export) (tcp, sock string) {
	t.Helper()
	s, err := nbd.NewServer(nbd.Config{Exports: exports, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return listenBoth(t, s)
}

// listenBoth serves s on a loopback TCP port and a Unix socket until the
// test ends.
func listenBoth(t *testing.T, s *nbd.Server) (tcp, sock string) {
	t.Helper()
	lt, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(t.TempDir(), "nbd.sock")
	lu, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	go func() { errs <- s.Serve(lt) }()
	go func() { errs <- s.Serve(lu) }()
	t.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		for range 2 {
			if err := <-errs; !errors.Is(err, nbd.ErrServerClosed) {
				t.Error(err)
			}
		}
	})
	return lt.Addr().String(), sock
}

// run runs a program and returns its output; it fails the test if the
// program fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := runErr(name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// sparseFile writes a raw disk file of size bytes with random data in a
// few places and holes between.
func sparseFile(t *testing.T, path string, size int, seed uint64) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	data := make([]byte, size)
	for _, r := range [][2]int{{0, 4096}, {3*mib + 512, 70000}, {9 * mib, 2 * mib}, {size - 100, 100}} {
		for i := r[0]; i < r[0]+r[1]; i++ {
			data[i] = byte(rng.Uint32())
		}
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

func sameFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from what was written (%d bytes, want %d)", path, len(got), len(want))
	}
}

// Real NBD clients against images of a cluster: qemu-img converts a raw
// and a qcow2 file into an export and back and compares them; nbdcopy
// copies both ways, over TCP and a Unix socket; nbdinfo lists the
// exports and maps an image's holes; a snapshot's export refuses writes.
func TestRealClients(t *testing.T) {
	needTools(t, "qemu-img", "qemu-io", "nbdinfo", "nbdcopy")
	_, p := rbdCluster(t)
	ctx := context.Background()
	const size = 16 * mib
	for _, name := range []string{"disk", "copy", "sparse"} {
		if err := p.Create(ctx, name, size, rbd.CreateOptions{Order: 20}); err != nil {
			t.Fatal(err)
		}
	}
	// The snapshot holds "before"; the head is written after it.
	sparse := open(t, p, "sparse", rbd.OpenOptions{})
	if err := sparse.WriteAt(ctx, bytes.Repeat([]byte("before"), 1000), 5*mib); err != nil {
		t.Fatal(err)
	}
	if err := sparse.SnapCreate(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := sparse.WriteAt(ctx, []byte("after"), 0); err != nil {
		t.Fatal(err)
	}
	tcp, sock := serveExports(t,
		nbd.Export{Name: "disk", Description: "rbd/disk", Backend: nbd.NewRBD(open(t, p, "disk", rbd.OpenOptions{}), false)},
		nbd.Export{Name: "copy", Backend: nbd.NewRBD(open(t, p, "copy", rbd.OpenOptions{}), false)},
		nbd.Export{Name: "sparse", Backend: nbd.NewRBD(sparse, false)},
		nbd.Export{Name: "sparse@s", Backend: nbd.NewRBD(open(t, p, "sparse", rbd.OpenOptions{Snap: "s"}), true)},
	)
	uri := func(export string) string { return "nbd://" + tcp + "/" + export }
	unixURI := func(export string) string { return "nbd+unix:///" + export + "?socket=" + sock }
	dir := t.TempDir()

	t.Run("qemu-img raw", func(t *testing.T) {
		raw := filepath.Join(dir, "in.raw")
		data := sparseFile(t, raw, size, 1)
		run(t, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", raw, uri("disk"))
		run(t, "qemu-img", "compare", "-f", "raw", "-F", "raw", raw, uri("disk"))
		out := filepath.Join(dir, "out.raw")
		run(t, "qemu-img", "convert", "-f", "raw", "-O", "raw", uri("disk"), out)
		sameFile(t, out, data)
	})
	t.Run("qemu-img qcow2", func(t *testing.T) {
		q := filepath.Join(dir, "in.qcow2")
		run(t, "qemu-img", "create", "-q", "-f", "qcow2", q, fmt.Sprint(size))
		run(t, "qemu-io", "-f", "qcow2", "-c", "write -P 0x55 1M 1M", "-c", "write -P 0xaa 7M 64k", "-c", "write -P 0x01 15M 4k", q)
		run(t, "qemu-img", "convert", "-n", "-f", "qcow2", "-O", "raw", q, uri("copy"))
		run(t, "qemu-img", "compare", "-f", "qcow2", "-F", "raw", q, uri("copy"))
		back := filepath.Join(dir, "back.qcow2")
		run(t, "qemu-img", "convert", "-f", "raw", "-O", "qcow2", uri("copy"), back)
		run(t, "qemu-img", "compare", "-f", "qcow2", "-F", "qcow2", q, back)
	})
	t.Run("nbdcopy", func(t *testing.T) {
		raw := filepath.Join(dir, "nbdcopy.raw")
		data := sparseFile(t, raw, size, 2)
		run(t, "nbdcopy", raw, unixURI("disk"))
		out := filepath.Join(dir, "nbdcopy.out")
		run(t, "nbdcopy", uri("disk"), out)
		sameFile(t, out, data)
		// Export to export, both through the server.
		run(t, "nbdcopy", unixURI("disk"), uri("copy"))
		run(t, "qemu-img", "compare", "-f", "raw", "-F", "raw", uri("disk"), uri("copy"))
	})
	t.Run("nbdinfo", func(t *testing.T) {
		list := run(t, "nbdinfo", "--list", "nbd://"+tcp)
		for _, want := range []string{"export=\"disk\"", "description: rbd/disk", "export=\"sparse@s\"", "is_read_only: true", "base:allocation"} {
			if !strings.Contains(list, want) {
				t.Errorf("nbdinfo --list lacks %q:\n%s", want, list)
			}
		}
		// The sparse image's data objects 0 and 5 (1 MiB each) hold
		// "after" (5 bytes) and "before"×1000 (6,000 bytes): the rest
		// is holes.
		got := strings.Fields(run(t, "nbdinfo", "--map", uri("sparse")))
		want := strings.Fields(`
			      0        5  0 data
			      5  5242875  3 hole,zero
			5242880     6000  0 data
			5248880 11528336  3 hole,zero`)
		if !slicesEqual(got, want) {
			t.Errorf("nbdinfo --map:\n%s\nwant\n%s", strings.Join(got, " "), strings.Join(want, " "))
		}
		// At the snapshot, object 0 had not been written.
		if m := strings.Join(strings.Fields(run(t, "nbdinfo", "--map", uri("sparse@s"))), " "); m != "0 5242880 3 hole,zero 5242880 6000 0 data 5248880 11528336 3 hole,zero" {
			t.Errorf("nbdinfo --map at the snapshot: %s", m)
		}
	})
	t.Run("snapshot read-only", func(t *testing.T) {
		out := filepath.Join(dir, "snap.raw")
		run(t, "nbdcopy", uri("sparse@s"), out)
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:5], make([]byte, 5)) || !bytes.HasPrefix(got[5*mib:], []byte("beforebefore")) {
			t.Fatal("the snapshot's export does not read the snapshot")
		}
		// nbdcopy refuses a read-only destination; qemu-io's write is
		// refused by the server with EPERM.
		if out, err := runErr("nbdcopy", out, uri("sparse@s")); err == nil {
			t.Fatalf("nbdcopy to a snapshot export succeeded:\n%s", out)
		}
		// qemu-io opens a read-only export only read-only.
		if out, err := runErr("qemu-io", "-f", "raw", "-c", "write 0 512", uri("sparse@s")); err == nil || !strings.Contains(out, "Permission denied") {
			t.Fatalf("qemu-io write to a snapshot export: %v\n%s", err, out)
		}
		// A client that writes anyway gets EPERM, and the snapshot is
		// unchanged.
		if errno := rawWrite(t, tcp, "sparse@s"); errno != proto.EPERM {
			t.Fatalf("a write to the snapshot export answered %v, want EPERM", errno)
		}
		run(t, "nbdcopy", uri("sparse@s"), out)
		if again, _ := os.ReadFile(out); !bytes.Equal(again, got) {
			t.Fatal("the snapshot changed")
		}
	})
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rawWrite negotiates export with NBD_OPT_EXPORT_NAME, sends one 512-byte
// WRITE at 0 and returns the reply's error.
func rawWrite(t *testing.T, addr, export string) proto.Errno {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.ReadFull(c, make([]byte, 18)); err != nil {
		t.Fatal(err)
	}
	b := binary.BigEndian.AppendUint32(nil, proto.ClientFixedNewstyle|proto.ClientNoZeroes)
	b = binary.BigEndian.AppendUint64(b, proto.OptMagic)
	b = binary.BigEndian.AppendUint32(b, proto.OptExportName)
	b = binary.BigEndian.AppendUint32(b, uint32(len(export)))
	b = append(b, export...)
	b = proto.AppendRequest(b, proto.Request{Type: proto.CmdWrite, Cookie: 1, Length: 512})
	if _, err := c.Write(append(b, make([]byte, 512)...)); err != nil {
		t.Fatal(err)
	}
	r := make([]byte, 10+16)
	if _, err := io.ReadFull(c, r); err != nil {
		t.Fatal(err)
	}
	return proto.Errno(binary.BigEndian.Uint32(r[14:]))
}

// serveTLS is serveExports with TLS: required, and with a client
// certificate when clientCerts.
func serveTLS(t *testing.T, tlsConf *tls.Config, exports ...nbd.Export) (tcp, sock string) {
	t.Helper()
	s, err := nbd.NewServer(nbd.Config{Exports: exports, TLS: tlsConf, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return listenBoth(t, s)
}

// Real clients over TLS (proto.md "TLS support"; a server that requires
// it and client certificates): nbdinfo and nbdcopy with nbds:// and
// nbds+unix:// URIs and tls-certificates=DIR, qemu-img with a
// tls-creds-x509 object, over TCP and a Unix socket. Clients without TLS,
// or without a client certificate, are refused.
func TestRealClientsTLS(t *testing.T) {
	needTools(t, "qemu-img", "nbdinfo", "nbdcopy")
	_, p := rbdCluster(t)
	ctx := context.Background()
	const size = 16 * mib
	if err := p.Create(ctx, "disk", size, rbd.CreateOptions{Order: 20}); err != nil {
		t.Fatal(err)
	}
	certs := nbd.MakeCerts(t, t.TempDir())
	tcp, sock := serveTLS(t, certs.ServerConfig(true),
		nbd.Export{Name: "disk", Description: "rbd/disk", Backend: nbd.NewRBD(open(t, p, "disk", rbd.OpenOptions{}), false)})
	_, port, _ := net.SplitHostPort(tcp)
	dir := t.TempDir()
	q := "?tls-certificates=" + certs.Dir
	uri := "nbds://" + tcp + "/disk" + q
	unixURI := "nbds+unix:///disk?socket=" + sock + "&tls-certificates=" + certs.Dir

	t.Run("nbdinfo", func(t *testing.T) {
		out := run(t, "nbdinfo", uri)
		for _, want := range []string{"export=\"disk\"", "export-size: 16777216", "description: rbd/disk", "newstyle-fixed with TLS"} {
			if !strings.Contains(out, want) {
				t.Errorf("nbdinfo lacks %q:\n%s", want, out)
			}
		}
		if out := run(t, "nbdinfo", "--list", "nbds://"+tcp+q); !strings.Contains(out, "export=\"disk\"") {
			t.Errorf("nbdinfo --list over TLS:\n%s", out)
		}
	})
	t.Run("nbdcopy", func(t *testing.T) {
		raw := filepath.Join(dir, "in.raw")
		data := sparseFile(t, raw, size, 3)
		run(t, "nbdcopy", raw, unixURI)
		out := filepath.Join(dir, "out.raw")
		run(t, "nbdcopy", uri, out)
		sameFile(t, out, data)
	})
	creds := "tls-creds-x509,id=tls0,endpoint=client,dir=" + certs.Dir
	inet := "driver=nbd,server.type=inet,server.host=127.0.0.1,server.port=" + port + ",export=disk,tls-creds=tls0"
	unix := "driver=nbd,server.type=unix,server.path=" + sock + ",export=disk,tls-creds=tls0,tls-hostname=localhost"
	t.Run("qemu-img", func(t *testing.T) {
		if out := run(t, "qemu-img", "info", "--object", creds, "--image-opts", inet); !strings.Contains(out, "virtual size: 16 MiB") {
			t.Errorf("qemu-img info:\n%s", out)
		}
		raw := filepath.Join(dir, "qemu.raw")
		data := sparseFile(t, raw, size, 4)
		run(t, "qemu-img", "convert", "-n", "--object", creds, "-f", "raw", raw, "--target-image-opts", unix)
		out := filepath.Join(dir, "qemu.out")
		run(t, "qemu-img", "convert", "--object", creds, "--image-opts", inet, "-O", "raw", out)
		sameFile(t, out, data)
	})
	t.Run("refused", func(t *testing.T) {
		// A directory with the CA but no client certificate.
		noCert := t.TempDir()
		b, err := os.ReadFile(filepath.Join(certs.Dir, "ca-cert.pem"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(noCert, "ca-cert.pem"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			why  string
			args []string
			want string
		}{
			{"nbdinfo without TLS", []string{"nbdinfo", "nbd://" + tcp + "/disk"}, "newstyle-fixed without TLS"},
			{"nbdinfo without a client certificate", []string{"nbdinfo", "nbds://" + tcp + "/disk?tls-certificates=" + noCert}, "TLS fatal alert"},
			{"qemu-img without TLS", []string{"qemu-img", "info", "nbd://" + tcp + "/disk"}, "this server requires TLS: send NBD_OPT_STARTTLS first"},
			{"qemu-img without a client certificate", []string{"qemu-img", "info", "--object", "tls-creds-x509,id=tls0,endpoint=client,dir=" + noCert, "--image-opts", inet}, "TLS channel"},
		} {
			if out, err := runErr(tc.args[0], tc.args[1:]...); err == nil || !strings.Contains(out, tc.want) {
				t.Errorf("%s: %v, want a refusal with %q:\n%s", tc.why, err, tc.want, out)
			}
		}
	})
	// TLS optional: the same clients with and without TLS.
	t.Run("optional", func(t *testing.T) {
		s, err := nbd.NewServer(nbd.Config{
			Exports: []nbd.Export{{Name: "disk", Backend: nbd.NewRBD(open(t, p, "disk", rbd.OpenOptions{ReadOnly: true}), true)}},
			TLS:     certs.ServerConfig(false), TLSOptional: true, Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		tcp, sock := listenBoth(t, s)
		for uri, want := range map[string]string{
			"nbd://" + tcp + "/disk":                                              "newstyle-fixed without TLS",
			"nbds://" + tcp + "/disk" + q:                                         "newstyle-fixed with TLS",
			"nbd+unix:///disk?socket=" + sock:                                     "newstyle-fixed without TLS",
			"nbds+unix:///disk?socket=" + sock + "&tls-certificates=" + certs.Dir: "newstyle-fixed with TLS",
		} {
			if out := run(t, "nbdinfo", uri); !strings.Contains(out, want) || !strings.Contains(out, "is_read_only: true") {
				t.Errorf("nbdinfo %s:\n%s", uri, out)
			}
		}
		if out := run(t, "qemu-img", "info", "--object", creds, "--image-opts", "driver=nbd,server.type=unix,server.path="+sock+",export=disk,tls-creds=tls0,tls-hostname=localhost"); !strings.Contains(out, "virtual size: 16 MiB") {
			t.Errorf("qemu-img info over TLS:\n%s", out)
		}
	})
}

package blocktest

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

// Bad input against a `cuttle nbd serve` process: requests past the end
// of an export and writes to a snapshot's (read-only) export get the
// protocol's errors — from qemu-io as a user sees them and from raw
// requests qemu-io does not send — on a connection that goes on serving;
// `cuttle rbd resize` below the data without --allow-shrink is refused
// with a message that says how. The image is unchanged throughout.
func TestBadInput(t *testing.T) {
	needTools(t, "qemu-io", "qemu-img")
	c := upCluster(t)
	const size = 4 * mib
	c.cli("rbd", "create", "small", "--size", "4M", "--object-size", "1M")
	data := filepath.Join(t.TempDir(), "data.raw")
	want := make([]byte, size)
	for i := range want[mib : 3*mib] {
		want[mib+i] = byte(i * 7)
	}
	if err := os.WriteFile(data, want, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := c.serve("small")
	tool(t, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", data, srv.uri("small"))
	c.cli("rbd", "snap", "create", "small@s")
	srv.stop()
	srv = c.serve("small", "small@s")

	// qemu-io: reads and writes past the end are refused; a snapshot's
	// export is opened read-only, and a write refused.
	for _, q := range []struct{ export, cmd, want string }{
		{"small", "read 4M 4k", "Input/output error"},
		{"small", "write 4092k 8k", "Input/output error"},
		{"small@s", "write 0 4k", "Permission denied"},
	} {
		out, err := toolErr("qemu-io", "-f", "raw", "-c", q.cmd, srv.uri(q.export))
		if !strings.Contains(out, q.want) || strings.Contains(out, "wrote ") || strings.Contains(out, "read 4096/") {
			t.Errorf("qemu-io %q on %s: %v\n%s", q.cmd, q.export, err, out)
		}
	}

	// Raw requests, each answered with its error, on one connection
	// that then still serves a good read.
	for export, reqs := range map[string][]struct {
		q    proto.Request
		want proto.Errno
	}{
		"small": {
			{proto.Request{Type: proto.CmdRead, Offset: size, Length: 4096}, proto.EINVAL},
			{proto.Request{Type: proto.CmdRead, Offset: size - 512, Length: 1024}, proto.EINVAL},
			{proto.Request{Type: proto.CmdWrite, Offset: size - 512, Length: 1024}, proto.ENOSPC},
			{proto.Request{Type: proto.CmdWrite, Offset: 1 << 62, Length: 512}, proto.ENOSPC},
			{proto.Request{Type: proto.CmdTrim, Offset: size, Length: 4096}, proto.ENOSPC},
			{proto.Request{Type: proto.CmdWriteZeroes, Offset: size - 4096, Length: 8192}, proto.ENOSPC},
		},
		"small@s": {
			{proto.Request{Type: proto.CmdWrite, Offset: 0, Length: 512}, proto.EPERM},
			{proto.Request{Type: proto.CmdTrim, Offset: 0, Length: mib}, proto.EPERM},
			{proto.Request{Type: proto.CmdWriteZeroes, Offset: 0, Length: mib}, proto.EPERM},
		},
	} {
		conn := rawConnect(t, srv.sock, export)
		for i, r := range reqs {
			r.q.Cookie = uint64(i + 1)
			if got, _ := rawRequest(t, conn, r.q); got != r.want {
				t.Errorf("%s: %+v answered %v, want %v", export, r.q, got, r.want)
			}
		}
		if errno, b := rawRequest(t, conn, proto.Request{Type: proto.CmdRead, Cookie: 99, Offset: mib, Length: 4096}); errno != 0 || !bytes.Equal(b, want[mib:mib+4096]) {
			t.Errorf("%s: a good read after the bad requests: %v", export, errno)
		}
		conn.Close()
	}

	// A shrink below the data is refused and says how to do it.
	_, err := c.try("rbd", "resize", "small", "--size", "1M")
	if err == nil || !strings.Contains(err.Error(), "--allow-shrink") || !strings.Contains(err.Error(), "(EINVAL)") {
		t.Errorf("resize below the data without --allow-shrink: %v", err)
	}
	if info := c.cli("rbd", "info", "small"); !strings.Contains(info, "size 4 MiB") {
		t.Errorf("info after the refused shrink:\n%s", info)
	}
	// The image and its snapshot still hold what was written.
	tool(t, "qemu-img", "compare", "-f", "raw", "-F", "raw", data, srv.uri("small"))
	tool(t, "qemu-img", "compare", "-f", "raw", "-F", "raw", data, srv.uri("small@s"))
	srv.stop()
}

// rawConnect opens a connection to export with NBD_OPT_EXPORT_NAME (no
// structured replies: each reply is a simple one).
func rawConnect(t *testing.T, sock, export string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.ReadFull(c, make([]byte, 18)); err != nil { // greeting
		t.Fatal(err)
	}
	b := binary.BigEndian.AppendUint32(nil, proto.ClientFixedNewstyle|proto.ClientNoZeroes)
	b = binary.BigEndian.AppendUint64(b, proto.OptMagic)
	b = binary.BigEndian.AppendUint32(b, proto.OptExportName)
	b = binary.BigEndian.AppendUint32(b, uint32(len(export)))
	b = append(b, export...)
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 10)); err != nil { // size, flags
		t.Fatalf("export %s: %v", export, err)
	}
	return c
}

// rawRequest sends q (with Length zero bytes for a write) and returns its
// reply's error and, for a good read, the data.
func rawRequest(t *testing.T, c net.Conn, q proto.Request) (proto.Errno, []byte) {
	t.Helper()
	b := proto.AppendRequest(nil, q)
	if q.Type == proto.CmdWrite {
		b = append(b, make([]byte, q.Length)...)
	}
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	r := make([]byte, 16)
	if _, err := io.ReadFull(c, r); err != nil {
		t.Fatalf("reply to %+v: %v", q, err)
	}
	if binary.BigEndian.Uint32(r) != proto.SimpleReplyMagic || binary.BigEndian.Uint64(r[8:]) != q.Cookie {
		t.Fatalf("reply to %+v: % x", q, r)
	}
	errno := proto.Errno(binary.BigEndian.Uint32(r[4:]))
	if errno != 0 || q.Type != proto.CmdRead {
		return errno, nil
	}
	data := make([]byte, q.Length)
	if _, err := io.ReadFull(c, data); err != nil {
		t.Fatal(err)
	}
	return 0, data
}

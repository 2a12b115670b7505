package rawio

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Pwritev places the buffers one after the other at the offset, and
// Append continues at the descriptor's offset.
func TestPwritevAndAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := Append(f.Fd(), []byte("head:")); n != 5 || err != nil {
		t.Fatalf("Append = %d, %v", n, err)
	}
	if err := Pwritev(f.Fd(), [][]byte{[]byte("ab"), nil, []byte("cd")}, 5); err != nil {
		t.Fatalf("Pwritev: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "head:abcd" {
		t.Fatalf("file holds %q", got)
	}
}

func TestProgress(t *testing.T) {
	if progress("write", 0, syscall.EINTR) != nil || progress("write", 3, 0) != nil {
		t.Fatal("EINTR or progress ended the loop")
	}
	if err := progress("write", 0, 0); err != io.ErrShortWrite {
		t.Fatalf("a write of nothing: %v, want io.ErrShortWrite", err)
	}
	if err := progress("write", 0, syscall.ENOSPC); err == nil || err.Error() != "write: no space left on device" {
		t.Fatalf("ENOSPC: %v", err)
	}
}

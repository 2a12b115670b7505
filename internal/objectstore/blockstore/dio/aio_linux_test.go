//go:build linux && (amd64 || arm64)

package dio

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAIOCombinedSubmissions reads from more goroutines than the AIO
// context's queue holds, so that submissions are combined and some
// reads are turned away (ErrBusy, the caller's cue to pread); every
// read the kernel took must return the file's bytes.
func TestAIOCombinedSubmissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	const blocks = 256
	want := make([]byte, blocks*Align)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f := OpenDirect(path)
	if f == nil {
		t.Skip("O_DIRECT not available here")
	}
	defer f.Close()
	a := NewAIO(f)
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	defer a.Close()
	const readers, reads = 4 * aioQueueDepth, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var busy int
	errs := make(chan error, readers)
	for g := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range reads {
				b := (g*reads + i) % blocks
				buf := AlignedBuf(Align)
				n, err := a.ReadAt(buf, int64(b*Align))
				if errors.Is(err, ErrBusy) {
					mu.Lock()
					busy++
					mu.Unlock()
					continue
				}
				if err == nil && (n != Align || !bytes.Equal(buf, want[b*Align:(b+1)*Align])) {
					err = fmt.Errorf("block %d: read %d bytes that differ", b, n)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d of %d reads turned away", busy, readers*reads)
}

// TestAIOSyncData syncs a file through an AIO context, and checks that
// a bad descriptor is an error rather than a silent success and that
// the eventfd stays non-blocking (a blocking one would hold a thread in
// the reaper's read).
func TestAIOSyncData(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("durable")); err != nil {
		t.Fatal(err)
	}
	a := NewSyncAIO()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	defer a.Close()
	if err := a.SyncData(f.Fd()); err != nil {
		t.Fatalf("syncData: %v", err)
	}
	if got := a.Syncs(); got != 1 {
		t.Fatalf("syncs = %d, want 1", got)
	}
	if err := a.SyncData(1 << 30); err == nil || errors.Is(err, ErrBusy) {
		t.Fatalf("syncData of a bad descriptor: %v, want an error", err)
	}
	flags, err := unix.FcntlInt(uintptr(a.resfd), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.O_NONBLOCK == 0 {
		t.Fatal("the eventfd is in blocking mode")
	}
}

// TestAIOConcurrentSyncs runs more syncs at once than one reap takes
// (64 events): every one completes, reaped through the raw eventfd
// reads and io_getevents calls of a sync context.
func TestAIOConcurrentSyncs(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := NewSyncAIO()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	defer a.Close()
	if a.rawEfd == nil {
		t.Fatal("a sync context reads its eventfd with ordinary calls")
	}
	const syncers, each = 150, 4
	var wg sync.WaitGroup
	errs := make(chan error, syncers*each)
	for range syncers {
		wg.Go(func() {
			for range each {
				if err := a.SyncData(f.Fd()); err != nil && !errors.Is(err, ErrBusy) {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("syncData: %v", err)
	}
	if a.Syncs() == 0 {
		t.Fatal("no sync ran through AIO")
	}
	t.Logf("%d of %d syncs through AIO", a.Syncs(), syncers*each)
}

// appendRaw writes at the descriptor's offset, which the file's own
// Write shares, and reports a descriptor it cannot write.
func TestAppendRaw(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wal")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := appendRaw(f.Fd(), []byte("first ")); n != 6 || err != nil {
		t.Fatalf("appendRaw = %d, %v", n, err)
	}
	if _, err := f.Write([]byte("second ")); err != nil {
		t.Fatal(err)
	}
	if n, err := appendRaw(f.Fd(), []byte("third")); n != 5 || err != nil {
		t.Fatalf("appendRaw = %d, %v", n, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "first second third" {
		t.Fatalf("file holds %q", got)
	}
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := appendRaw(ro.Fd(), []byte("x")); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("appendRaw to a read-only descriptor: %v, want EBADF", err)
	}
}

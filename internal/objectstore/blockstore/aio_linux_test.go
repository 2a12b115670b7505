//go:build linux && (amd64 || arm64)

package blockstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestAIOCombinedSubmissions reads from more goroutines than the AIO
// context's queue holds, so that submissions are combined and some
// reads are turned away (errAIOBusy, the caller's cue to pread); every
// read the kernel took must return the file's bytes.
func TestAIOCombinedSubmissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	const blocks = 256
	want := make([]byte, blocks*directAlign)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f := openDirect(path)
	if f == nil {
		t.Skip("O_DIRECT not available here")
	}
	defer f.Close()
	a := newAIO(f)
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	defer a.close()
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
				buf := alignedBuf(directAlign)
				n, err := a.readAt(buf, int64(b*directAlign))
				if errors.Is(err, errAIOBusy) {
					mu.Lock()
					busy++
					mu.Unlock()
					continue
				}
				if err == nil && (n != directAlign || !bytes.Equal(buf, want[b*directAlign:(b+1)*directAlign])) {
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

package sim

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// Large reads return their buffers to the store once the reply is
// written, and later reads reuse them: 16 readers at once over TCP with
// blockstores, each checking every byte of objects with distinct
// contents, get every object's own bytes through that reuse. (That the
// messenger reports a reply written only once it is out is tested in
// msgr, TestDoneWaitsForTheWrite: a race here would rarely show.)
func TestRecycledReadBuffersKeepRepliesIntact(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 400 MiB")
	}
	io := benchClusterOpts(t, 3, Options{TCP: true, StoreDir: t.TempDir()})
	ctx := context.Background()
	const objects, size = 24, 1 << 20
	want := make([][]byte, objects)
	for i := range want {
		r := rand.New(rand.NewPCG(uint64(i), 1))
		want[i] = make([]byte, size)
		for j := range want[i] {
			want[i][j] = byte(r.Uint32())
		}
		if err := io.WriteFull(ctx, fmt.Sprint("o", i), want[i]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for range 25 {
				i := r.IntN(objects)
				got, err := io.Read(ctx, fmt.Sprint("o", i), 0, size)
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(got, want[i]) {
					t.Errorf("object %d came back with other bytes", i)
					return
				}
			}
		})
	}
	wg.Wait()
}

package sim

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cuttlestore/cuttle/rados"
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

// ReadInto hands each reply's buffer back to the client's messenger,
// which reuses it for later replies, and so does a released ReadBuffer;
// replies whose data a caller still holds (Read, a ReadOp mixing Read and
// ReadInto, a Buffer not released) must never be reused. 16 workers over
// TCP mix all of them and keep every result they hold; at the end each
// kept result still holds its object's bytes.
func TestReadIntoReusesOnlyRepliesNobodyHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 200 MiB")
	}
	io := benchClusterOpts(t, 1, Options{TCP: true, StoreDir: t.TempDir()})
	ctx := context.Background()
	const objects, size = 12, 1 << 20
	want := make([][]byte, objects)
	for i := range want {
		want[i] = bytes.Repeat([]byte{byte(i + 1)}, size)
		want[i][i] = 0xee
		if err := io.WriteFull(ctx, fmt.Sprint("o", i), want[i]); err != nil {
			t.Fatal(err)
		}
	}
	type held struct {
		i, off int // data should be object i's bytes from off
		data   []byte
	}
	var mu sync.Mutex
	var kept []held
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 3))
			buf := make([]byte, size)
			for range 16 {
				i := r.IntN(objects)
				name := fmt.Sprint("o", i)
				switch r.IntN(5) {
				case 0:
					n, err := io.ReadInto(ctx, name, 0, buf)
					if err != nil || !bytes.Equal(buf[:n], want[i]) {
						t.Errorf("ReadInto %s: %d bytes, %v", name, n, err)
						return
					}
				case 1:
					b, err := io.Read(ctx, name, 0, size)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					kept = append(kept, held{i, 0, b})
					mu.Unlock()
				case 2:
					op := rados.NewReadOp()
					into := op.ReadInto(0, buf[:size/2])
					rest := op.Read(size/2, 0)
					if err := io.OperateRead(ctx, name, op); err != nil {
						t.Error(err)
						return
					}
					if !bytes.Equal(into.Data, want[i][:size/2]) {
						t.Errorf("ReadInto step of %s came back with other bytes", name)
						return
					}
					mu.Lock()
					kept = append(kept, held{i, size / 2, rest.Data})
					mu.Unlock()
				case 3:
					b, err := io.ReadBuffer(ctx, name, 0, 0)
					if err != nil || !bytes.Equal(b.Data, want[i]) {
						t.Errorf("ReadBuffer %s: %v", name, err)
						return
					}
					b.Release()
					b.Release() // a second release must not free it twice
				case 4:
					b, err := io.ReadBuffer(ctx, name, 0, 0)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					kept = append(kept, held{i, 0, b.Data}) // never released
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, h := range kept {
		if !bytes.Equal(h.data, want[h.i][h.off:]) {
			t.Fatalf("a held read of object %d at %d was overwritten", h.i, h.off)
		}
	}
}

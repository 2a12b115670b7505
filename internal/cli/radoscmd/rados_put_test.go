package radoscmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// faultTarget wraps a putTarget: write number failWrite (1-based) fails
// with writeErr without reaching the cluster, and removals fail with
// removeErr if set.
type faultTarget struct {
	putTarget
	failWrite int  // the write that fails (1: the first)
	failLater bool // and every write after it
	writeErr  error
	removeErr error
	writes    int
	removes   int
}

type failedOp struct{ err error }

func (f failedOp) Wait(context.Context) error { return f.err }

func (f *faultTarget) writeFull(ctx context.Context, name string, data []byte) waiter {
	if f.fails() {
		return failedOp{f.writeErr}
	}
	return f.putTarget.writeFull(ctx, name, data)
}

func (f *faultTarget) writeAt(ctx context.Context, name string, data []byte, off uint64) waiter {
	if f.fails() {
		return failedOp{f.writeErr}
	}
	return f.putTarget.writeAt(ctx, name, data, off)
}

// fails counts a write and says whether it fails.
func (f *faultTarget) fails() bool {
	f.writes++
	return f.writes == f.failWrite || f.failLater && f.writes > f.failWrite
}

func (f *faultTarget) remove(ctx context.Context, name string) error {
	f.removes++
	if f.removeErr != nil {
		return f.removeErr
	}
	return f.putTarget.remove(ctx, name)
}

// cancelAfter is a reader that cancels a context once n bytes were read.
type cancelAfter struct {
	r      io.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n -= n; c.n <= 0 {
		c.cancel()
	}
	return n, err
}

// A put of several pieces that fails part way leaves no partial object
// behind: it removes what it wrote, whether a write was refused (ENOSPC
// on the third piece, replacing an existing object), the input failed,
// or the context was cancelled; its error says so. If the removal fails
// too, the error says a partial object remains and how to remove it. A
// put of one piece is atomic and removes nothing.
func TestRadosPutFailureRemovesPartialObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRados(t)
		ioc, err := s.conn().OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		st := streamer{chunk: 1000, window: 3}
		data := bytes.Repeat([]byte("0123456789"), 550) // 6 pieces
		gone := func(name string) {
			t.Helper()
			if _, err := ioc.Stat(ctx, name); !errors.Is(err, rados.ErrNotFound) {
				t.Errorf("%s after a failed put: %v, want no object", name, err)
			}
		}
		removed := func(err error, cause error) {
			t.Helper()
			var pe *partialObjectError
			if !errors.Is(err, cause) || !errors.As(err, &pe) || !pe.Removed ||
				!strings.HasSuffix(err.Error(), "; the partly written object has been removed (the data it had before is lost)") {
				t.Errorf("error %v, want %v and the object removed", err, cause)
			}
		}

		// The input fails after 2500 bytes: two pieces were written.
		boom := errors.New("disk on fire")
		_, err = st.put(ctx, ioc, "broken-input", io.MultiReader(bytes.NewReader(data[:2500]), iotest.ErrReader(boom)))
		removed(err, boom)
		gone("broken-input")

		// The third write is refused while replacing an existing object.
		if err := ioc.WriteFull(ctx, "full", make([]byte, 20000)); err != nil {
			t.Fatal(err)
		}
		enospc := &rados.OpError{Op: "write", Object: "full", Index: 0, Errno: wire.ENOSPC}
		ft := &faultTarget{putTarget: ioTarget{ioc}, failWrite: 3, writeErr: enospc}
		_, err = st.putTo(ctx, ft, "full", bytes.NewReader(data))
		removed(err, enospc)
		gone("full")
		if msg := radosFailure("put rbd/full", err).Error(); !strings.HasPrefix(msg, "put rbd/full: no space left on the OSDs (ENOSPC); the partly written") {
			t.Errorf("put's message: %s", msg)
		}

		// The context is cancelled during the third piece: the removal
		// has its own.
		cctx, cancel := context.WithCancel(ctx)
		_, err = st.put(cctx, ioc, "cancelled", &cancelAfter{r: bytes.NewReader(data), n: 2500, cancel: cancel})
		removed(err, context.Canceled)
		gone("cancelled")

		// The removal fails: the object stays, and the error says how
		// to remove it. The fourth write fails; the fifth and sixth,
		// already in flight, land.
		ft = &faultTarget{putTarget: ioTarget{ioc}, failWrite: 4, writeErr: enospc, removeErr: errors.New("no quorum")}
		_, err = st.putTo(ctx, ft, "it's stuck", bytes.NewReader(data))
		var pe *partialObjectError
		if !errors.As(err, &pe) || pe.Removed || pe.Written != 4500 || !errors.Is(err, enospc) || !strings.HasSuffix(err.Error(),
			"; a partial object remains (4500 bytes of the input written) and could not be removed (no quorum): remove it with: cuttle rados -p rbd rm 'it'\\''s stuck'") {
			t.Errorf("put whose removal fails: %v", err)
		}
		if got, err := ioc.Read(ctx, "it's stuck", 0, 0); err != nil || !bytes.Equal(got[:3000], data[:3000]) {
			t.Errorf("the partial object: %d bytes, %v", len(got), err)
		}
		s.must("", "rados", "-p", "rbd", "rm", "it's stuck")
		gone("it's stuck")

		// A full pool refuses every write of a put that replaces an
		// object: the object is as it was, and put does not remove it.
		old := bytes.Repeat([]byte("old"), 1000)
		if err := ioc.WriteFull(ctx, "kept", old); err != nil {
			t.Fatal(err)
		}
		ft = &faultTarget{putTarget: ioTarget{ioc}, failWrite: 1, failLater: true, writeErr: enospc}
		var ue *unchangedObjectError
		if _, err = st.putTo(ctx, ft, "kept", bytes.NewReader(data)); !errors.Is(err, enospc) || !errors.As(err, &ue) || ft.removes != 0 {
			t.Errorf("put whose every write is refused: %v (%d removals)", err, ft.removes)
		}
		if got, err := ioc.Read(ctx, "kept", 0, 0); err != nil || !bytes.Equal(got, old) {
			t.Errorf("the object after a refused put: %d bytes, %v", len(got), err)
		}

		// One piece is one atomic write: if it fails, the object is as
		// it was, and put does not remove it.
		if err := ioc.WriteFull(ctx, "small", []byte("keep me")); err != nil {
			t.Fatal(err)
		}
		ft = &faultTarget{putTarget: ioTarget{ioc}, failWrite: 1, writeErr: enospc}
		if _, err = st.putTo(ctx, ft, "small", bytes.NewReader(data[:1000])); !errors.Is(err, enospc) || errors.As(err, &pe) || ft.removes != 0 {
			t.Errorf("put of one piece: %v (%d removals)", err, ft.removes)
		}
		if got, err := ioc.Read(ctx, "small", 0, 0); err != nil || string(got) != "keep me" {
			t.Errorf("the object after a failed put of one piece: %q, %v", got, err)
		}
	})
}

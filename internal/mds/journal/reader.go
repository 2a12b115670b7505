package journal

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Entry is one journaled entry.
type Entry struct {
	// Pos is the stream position of the entry's frame; End that of the
	// next one.
	Pos, End uint64
	// Generation is the generation of the writer that wrote it.
	Generation uint64
	// Payload is the entry's bytes (the caller's from there on).
	Payload []byte
}

// EndError says why a stream read stopped where it did: the bytes at Pos
// are not a valid next frame.
type EndError struct {
	Pos    uint64
	Reason string
	// Torn is true when the bytes there are not zeros: a frame partly
	// written (or the stale frame of an older writer); false when the
	// stream simply ends (nothing written yet).
	Torn bool
}

func (e *EndError) Error() string {
	kind := "end of the journal"
	if e.Torn {
		kind = "torn entry"
	}
	return fmt.Sprintf("journal: %s at %d: %s", kind, e.Pos, e.Reason)
}

// ErrDamaged is the class of a journal whose entries below the header's
// write position do not read back: flushed entries are lost. The MDS
// marks the rank damaged rather than replaying a partial journal.
var ErrDamaged = errors.New("journal: damaged")

// readahead is the bytes a stream reader reads at once, at least.
const readahead = 1 << 20

// streamReader reads frames from a position of a journal's stream.
type streamReader struct {
	s   *striper.Striper
	ino uint64
	// buf holds the stream's bytes from bufPos.
	buf    []byte
	bufPos uint64
	pos    uint64 // the next frame's position
	// lastGen is the generation of the last frame read; a lower one ends
	// the stream (a stale frame behind a later writer's).
	lastGen uint64
	// maxGen is the header's generation: a frame of a higher one is
	// from a writer whose header this reader has not read (or garbage).
	maxGen uint64
}

// fill makes buf hold at least n bytes from pos.
func (r *streamReader) fill(ctx context.Context, n uint64) error {
	if r.pos >= r.bufPos && r.pos+n <= r.bufPos+uint64(len(r.buf)) {
		return nil
	}
	size := max(n, readahead)
	buf := make([]byte, size)
	if err := r.s.ReadAt(ctx, r.ino, buf, r.pos); err != nil {
		return err
	}
	r.buf, r.bufPos = buf, r.pos
	return nil
}

// drop forgets the buffered bytes, which may be zeros that a writer has
// overwritten since they were read.
func (r *streamReader) drop() { r.buf, r.bufPos = nil, 0 }

// next reads the frame at pos. At the end of the stream it returns an
// *EndError (and forgets its buffer, so that a later call reads afresh);
// a failed read returns the error.
func (r *streamReader) next(ctx context.Context) (Entry, error) {
	if err := r.fill(ctx, frameHeaderLen); err != nil {
		return Entry{}, err
	}
	at := r.buf[r.pos-r.bufPos:]
	h, err := decodeFrameHead(at)
	if err != nil {
		r.drop()
		return Entry{}, &EndError{Pos: r.pos, Reason: err.Error(), Torn: !errors.Is(err, errNoFrame)}
	}
	if err := r.fill(ctx, FrameLen(int(h.length))); err != nil {
		return Entry{}, err
	}
	at = r.buf[r.pos-r.bufPos:]
	gen, payload, n, err := DecodeFrame(at, r.pos)
	switch {
	case err != nil:
	case gen < r.lastGen:
		err = fmt.Errorf("generation %d after %d: a stale entry of an earlier writer", gen, r.lastGen)
	case gen > r.maxGen:
		err = fmt.Errorf("generation %d above the header's %d", gen, r.maxGen)
	}
	if err != nil {
		r.drop()
		return Entry{}, &EndError{Pos: r.pos, Reason: err.Error(), Torn: true}
	}
	e := Entry{Pos: r.pos, End: r.pos + uint64(n), Generation: gen, Payload: append([]byte(nil), payload...)}
	r.pos, r.lastGen = e.End, gen
	return e, nil
}

// ReadHeader reads the header of journal ino in io (the metadata pool).
// A journal that does not exist is rados.ErrNotFound.
func ReadHeader(ctx context.Context, io *rados.IOContext, ino uint64) (Header, error) {
	b, err := io.Read(ctx, layout.ObjectName(ino, 0), 0, 0)
	if err != nil {
		return Header{}, fmt.Errorf("journal %#x: read header: %w", ino, err)
	}
	h, err := DecodeHeader(b)
	if err != nil {
		return Header{}, fmt.Errorf("journal %#x: %w", ino, err)
	}
	return h, nil
}

// ReplayResult says what a replay read.
type ReplayResult struct {
	// Header is the header the replay started from.
	Header Header
	// Entries is how many entries were replayed, from Header.ExpirePos
	// to End.
	Entries int
	// End is where the stream ends: the next entry goes there.
	End uint64
	// Stop says why the replay stopped at End (Stop.Torn: a partial or
	// stale frame there, which the next append overwrites).
	Stop *EndError
}

// Replay reads the entries of journal ino from its expire position to the
// end of the stream and passes each to apply (which may fail the replay).
// It reads and writes nothing else: a journal may be replayed by a reader
// while its writer goes on. An end of the stream below the header's write
// position is ErrDamaged.
func Replay(ctx context.Context, io *rados.IOContext, ino uint64, apply func(Entry) error) (ReplayResult, error) {
	h, err := ReadHeader(ctx, io, ino)
	if err != nil {
		return ReplayResult{}, err
	}
	s, err := striper.New(io, h.Layout, striper.Options{})
	if err != nil {
		return ReplayResult{}, fmt.Errorf("journal %#x: %w", ino, err)
	}
	r := &streamReader{s: s, ino: ino, pos: h.ExpirePos, maxGen: h.Generation}
	res := ReplayResult{Header: h}
	for {
		e, err := r.next(ctx)
		var end *EndError
		if errors.As(err, &end) {
			res.End, res.Stop = end.Pos, end
			if end.Pos < h.WritePos {
				return res, fmt.Errorf("journal %#x: %w: the header's write position is %d but %w", ino, ErrDamaged, h.WritePos, end)
			}
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("journal %#x: replay at %d: %w", ino, r.pos, err)
		}
		if err := apply(e); err != nil {
			return res, fmt.Errorf("journal %#x: replay of the entry at %d: %w", ino, e.Pos, err)
		}
		res.Entries++
	}
}

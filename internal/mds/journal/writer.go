package journal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Config says which journal a Writer writes and how.
type Config struct {
	// IO is an I/O context on the metadata pool, which the journal's
	// layout names.
	IO *rados.IOContext
	// Ino is the journal's inode (Ceph's: 0x200 + the MDS rank).
	Ino uint64
	// Layout stripes a new journal (Create only; Recover takes the
	// header's). Its pool must be IO's.
	Layout layout.Layout
	// MaxInFlight bounds the object writes of one flush in flight at
	// once (default: the striper's).
	MaxInFlight int
	// Logger receives the journal's events (default: discarded).
	Logger *slog.Logger
}

// ErrFailed is the class of every error of a Writer after a write of the
// stream failed: the entries appended since the last safe position may or
// may not be in the journal, so the MDS must stop (and a standby replay
// the journal) rather than go on.
var ErrFailed = errors.New("journal: writer failed")

// Writer appends to a journal. See the package comment.
type Writer struct {
	cfg Config
	s   *striper.Striper
	log *slog.Logger

	// headMu serialises header writes, so that an older header never
	// overwrites a newer one.
	headMu sync.Mutex

	mu  sync.Mutex
	hdr Header // the last header written (WritePos: as of that write)
	// pending holds the frames appended and not yet submitted, from
	// pendingPos.
	pending    []byte
	pendingPos uint64
	safePos    uint64   // everything below is committed
	flushes    []*flush // submitted, in stream order, not yet safe
	err        error    // sticky: set by a failed write
	// finished are the callbacks due, in order, and finishing says a
	// goroutine is running them.
	finished  []func()
	finishing bool
}

// flush is one submission of the stream: [start, end).
type flush struct {
	start, end uint64
	done       bool
	// err is set, before safe is closed, if the writer failed first.
	err error
	// callbacks are the FlushAsync callbacks waiting for it.
	callbacks []func(error)
	// safe is closed when everything below end is committed, or the
	// writer failed.
	safe chan struct{}
}

// Create makes a new, empty journal of cfg.Layout: its header, at
// generation 1, with every position at the layout's period. It fails
// with rados.ErrExists if the journal's header object exists. The
// journal's stream objects must not exist (remove an old journal with
// Remove first).
func Create(ctx context.Context, cfg Config) (*Writer, error) {
	l := cfg.Layout
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("journal %#x: %w", cfg.Ino, err)
	}
	p := l.Period()
	h := Header{Format: StreamFormat, Generation: 1, TrimmedPos: p, ExpirePos: p, WritePos: p, Layout: l}
	w, err := newWriter(cfg, h)
	if err != nil {
		return nil, err
	}
	op := rados.NewWriteOp()
	op.Create(true)
	op.WriteFull(h.Encode())
	if err := cfg.IO.OperateWrite(ctx, layout.ObjectName(cfg.Ino, 0), op); err != nil {
		return nil, fmt.Errorf("journal %#x: create: %w", cfg.Ino, err)
	}
	w.log.Info("journal created", "layout", l.String(), "start", p)
	return w, nil
}

// Recover replays journal cfg.Ino (Replay, passing each entry to apply)
// and returns a Writer that continues it: it writes the header with the
// next generation and the write position at the end of the replay, and
// waits for that header to commit, before any append. The next append
// overwrites a torn entry at the end. A damaged journal (ErrDamaged) is
// not opened.
func Recover(ctx context.Context, cfg Config, apply func(Entry) error) (*Writer, ReplayResult, error) {
	res, err := Replay(ctx, cfg.IO, cfg.Ino, apply)
	if err != nil {
		return nil, res, err
	}
	h := res.Header
	h.Generation++
	h.WritePos = res.End
	w, err := newWriter(cfg, h)
	if err != nil {
		return nil, res, err
	}
	if err := w.writeHead(ctx, h); err != nil {
		return nil, res, err
	}
	w.log.Info("journal recovered", "generation", h.Generation, "expire", h.ExpirePos, "end", res.End,
		"entries", res.Entries, "stop", res.Stop.Reason, "torn", res.Stop.Torn)
	return w, res, nil
}

func newWriter(cfg Config, h Header) (*Writer, error) {
	s, err := striper.New(cfg.IO, h.Layout, striper.Options{MaxInFlight: cfg.MaxInFlight})
	if err != nil {
		return nil, fmt.Errorf("journal %#x: %w", cfg.Ino, err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Writer{cfg: cfg, s: s, log: log.With("journal", fmt.Sprintf("%#x", cfg.Ino)), hdr: h,
		pendingPos: h.WritePos, safePos: h.WritePos}, nil
}

// Header returns the header as last written.
func (w *Writer) Header() Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hdr
}

// WritePos returns the position the next entry goes to.
func (w *Writer) WritePos() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pendingPos + uint64(len(w.pending))
}

// SafePos returns the position below which every entry is committed.
func (w *Writer) SafePos() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.safePos
}

// Append adds an entry to the journal and returns its position and the
// next one's. It is buffered until the next flush: nothing is durable
// before a flush ending at or after end returns.
func (w *Writer) Append(payload []byte) (pos, end uint64, err error) {
	if len(payload) > MaxEntry {
		return 0, 0, fmt.Errorf("journal %#x: entry of %d bytes is above the %d limit", w.cfg.Ino, len(payload), MaxEntry)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, 0, w.err
	}
	pos = w.pendingPos + uint64(len(w.pending))
	w.pending = AppendFrame(w.pending, pos, w.hdr.Generation, payload)
	return pos, w.pendingPos + uint64(len(w.pending)), nil
}

// Flush makes every entry appended so far durable: it returns once the
// OSDs have committed the stream up to the current write position, or the
// writer's error.
func (w *Writer) Flush(ctx context.Context) error {
	f, err := w.submit(ctx)
	if err != nil {
		return err
	}
	select {
	case <-f.safe:
	case <-ctx.Done():
		return fmt.Errorf("journal %#x: flush: %w", w.cfg.Ino, ctx.Err())
	}
	return f.err
}

// FlushAsync starts a flush of every entry appended so far and calls done
// (on a goroutine of its own) once they are committed, with nil, or with
// the writer's error. Flushes complete in order: done is called only
// after every earlier flush's.
func (w *Writer) FlushAsync(ctx context.Context, done func(error)) {
	f, _ := w.submit(ctx) // a failed writer's flush is done, with its error
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-f.safe:
		// Done already: after the callbacks queued before.
		w.finish(done, f.err)
	default:
		f.callbacks = append(f.callbacks, done)
	}
}

// finish queues a callback, to be run after the ones queued before it by
// the one goroutine that drains the queue. w.mu must be held.
func (w *Writer) finish(done func(error), err error) {
	w.finished = append(w.finished, func() { done(err) })
	if w.finishing {
		return
	}
	w.finishing = true
	go func() {
		w.mu.Lock()
		for len(w.finished) > 0 {
			next := w.finished[0]
			w.finished = w.finished[1:]
			w.mu.Unlock()
			next()
			w.mu.Lock()
		}
		w.finishing = false
		w.mu.Unlock()
	}()
}

// submit starts writing the pending bytes and returns their flush (one
// already safe if nothing is pending).
func (w *Writer) submit(ctx context.Context) (*flush, error) {
	w.mu.Lock()
	if w.err != nil {
		defer w.mu.Unlock()
		f := &flush{safe: make(chan struct{}), err: w.err}
		close(f.safe)
		return f, w.err
	}
	f := &flush{start: w.pendingPos, end: w.pendingPos + uint64(len(w.pending)), safe: make(chan struct{})}
	data := w.pending
	w.pending, w.pendingPos = nil, f.end
	if len(data) == 0 {
		// Nothing new: wait for the flushes in flight, if any.
		if n := len(w.flushes); n > 0 {
			f = w.flushes[n-1]
		} else {
			close(f.safe)
		}
		w.mu.Unlock()
		return f, nil
	}
	w.flushes = append(w.flushes, f)
	w.mu.Unlock()
	go func() {
		err := w.s.WriteAt(context.WithoutCancel(ctx), w.cfg.Ino, data, f.start)
		w.completed(f, err)
	}()
	return f, nil
}

// completed records a flush's end and advances the safe position over
// every flush done from the oldest.
func (w *Writer) completed(f *flush, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f.done = true
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("journal %#x: %w: write of [%d,%d): %w", w.cfg.Ino, ErrFailed, f.start, f.end, err)
		w.log.Error("journal write failed", "start", f.start, "end", f.end, "err", err)
		for _, g := range w.flushes {
			g.err = w.err
			close(g.safe)
			for _, cb := range g.callbacks {
				w.finish(cb, g.err)
			}
		}
		w.flushes = nil
		return
	}
	if w.err != nil {
		return // the flushes' channels are closed
	}
	for len(w.flushes) > 0 && w.flushes[0].done {
		g := w.flushes[0]
		w.safePos = g.end
		close(g.safe)
		for _, cb := range g.callbacks {
			w.finish(cb, nil)
		}
		w.flushes = w.flushes[1:]
	}
}

// WriteHead writes the header with the current safe position as the
// write position, and returns once it is committed.
func (w *Writer) WriteHead(ctx context.Context) error {
	w.mu.Lock()
	if w.err != nil {
		defer w.mu.Unlock()
		return w.err
	}
	h := w.hdr
	h.WritePos = w.safePos
	w.mu.Unlock()
	return w.writeHead(ctx, h)
}

// writeHead writes header h unless a newer one (by write or expire
// position) was written meanwhile.
func (w *Writer) writeHead(ctx context.Context, h Header) error {
	w.headMu.Lock()
	defer w.headMu.Unlock()
	w.mu.Lock()
	cur := w.hdr
	w.mu.Unlock()
	h.WritePos = max(h.WritePos, cur.WritePos)
	h.ExpirePos = max(h.ExpirePos, cur.ExpirePos)
	h.TrimmedPos = max(h.TrimmedPos, cur.TrimmedPos)
	if err := w.cfg.IO.WriteFull(ctx, layout.ObjectName(w.cfg.Ino, 0), h.Encode()); err != nil {
		return fmt.Errorf("journal %#x: write header: %w", w.cfg.Ino, err)
	}
	w.mu.Lock()
	w.hdr = h
	w.mu.Unlock()
	return nil
}

// Trim expires the entries below expire, which must be the position of an
// entry (or the safe position) at or below the safe position: it writes
// the header with the new expire position (replay starts there from
// then on) and then removes the stream's objects that lie wholly below
// it.
func (w *Writer) Trim(ctx context.Context, expire uint64) error {
	w.mu.Lock()
	if w.err != nil {
		defer w.mu.Unlock()
		return w.err
	}
	h := w.hdr
	if expire > w.safePos || expire < h.ExpirePos {
		defer w.mu.Unlock()
		return fmt.Errorf("journal %#x: trim to %d: outside [expire %d, safe %d]", w.cfg.Ino, expire, h.ExpirePos, w.safePos)
	}
	h.ExpirePos, h.WritePos = expire, w.safePos
	w.mu.Unlock()
	if err := w.writeHead(ctx, h); err != nil {
		return err
	}
	trimmed, err := removeBelow(ctx, w.s, w.cfg.Ino, h.TrimmedPos, expire)
	if err != nil {
		return fmt.Errorf("journal %#x: trim: %w", w.cfg.Ino, err)
	}
	// The header's trimmed position follows at its next write.
	w.mu.Lock()
	w.hdr.TrimmedPos = max(w.hdr.TrimmedPos, trimmed)
	w.mu.Unlock()
	return nil
}

// removeBelow removes the stream objects that hold no byte at or above
// expire, from the object set of trimmed on, and returns the new trimmed
// position: the first byte of the first object kept.
func removeBelow(ctx context.Context, s *striper.Striper, ino, trimmed, expire uint64) (uint64, error) {
	l := s.Layout()
	sc := uint64(l.StripeCount)
	osz := uint64(l.ObjectSize)
	no, _, _ := l.Locate(trimmed)
	no = no / sc * sc
	newTrimmed := trimmed
	var remove []uint64
	for ; l.FileOffset(no, 0) < expire; no++ {
		if l.FileOffset(no, osz-1) >= expire {
			continue // holds bytes of the live journal
		}
		remove = append(remove, no)
		if no%sc == sc-1 {
			// A whole object set goes.
			newTrimmed = max(newTrimmed, l.FileOffset(no+1, 0))
		}
	}
	if err := s.RemoveObjects(ctx, ino, remove); err != nil {
		return trimmed, err
	}
	return newTrimmed, nil
}

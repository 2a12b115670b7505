package journal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper"
)

// ErrTrimmedPast is the class of a Follower that fell behind: the journal
// was trimmed past its read position, so the entries it has not read are
// gone; a standby-replay MDS must load the metadata afresh.
var ErrTrimmedPast = errors.New("journal: trimmed past the follower")

// Follower follows a live journal for a standby-replay MDS: each Poll
// re-reads the header and reads every entry written since the last one.
// It never writes. When the writer dies, Recover (by the MDS that takes
// over) continues from the same bytes; a Follower that keeps polling
// meanwhile sees the new writer's entries, never the stale ones a torn
// write left behind.
type Follower struct {
	io  *rados.IOContext
	ino uint64

	mu  sync.Mutex
	r   *streamReader
	hdr Header
}

// NewFollower starts following journal ino from its expire position.
func NewFollower(ctx context.Context, io *rados.IOContext, ino uint64) (*Follower, error) {
	h, err := ReadHeader(ctx, io, ino)
	if err != nil {
		return nil, err
	}
	s, err := striper.New(io, h.Layout, striper.Options{})
	if err != nil {
		return nil, fmt.Errorf("journal %#x: %w", ino, err)
	}
	return &Follower{io: io, ino: ino, hdr: h, r: &streamReader{s: s, ino: ino, pos: h.ExpirePos, maxGen: h.Generation}}, nil
}

// Pos returns the position of the next entry the follower reads.
func (f *Follower) Pos() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.r.pos
}

// Poll re-reads the header, then reads and passes to apply every entry
// from the follower's position to the current end of the stream, and
// returns how many it read. A journal trimmed past the follower's
// position is ErrTrimmedPast.
func (f *Follower) Poll(ctx context.Context, apply func(Entry) error) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, err := ReadHeader(ctx, f.io, f.ino)
	if err != nil {
		return 0, err
	}
	if h.ExpirePos > f.r.pos {
		return 0, fmt.Errorf("journal %#x: %w: expire position %d, follower at %d", f.ino, ErrTrimmedPast, h.ExpirePos, f.r.pos)
	}
	f.hdr = h
	f.r.maxGen = h.Generation
	n := 0
	for {
		e, err := f.r.next(ctx)
		var end *EndError
		if errors.As(err, &end) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("journal %#x: follow at %d: %w", f.ino, f.r.pos, err)
		}
		if err := apply(e); err != nil {
			return n, fmt.Errorf("journal %#x: replay of the entry at %d: %w", f.ino, e.Pos, err)
		}
		n++
	}
}

// Follow polls every interval (on clk) until ctx ends or a poll fails,
// and returns that error.
func (f *Follower) Follow(ctx context.Context, clk clock.Clock, interval time.Duration, apply func(Entry) error) error {
	for {
		if _, err := f.Poll(ctx, apply); err != nil {
			return err
		}
		t := clk.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
	}
}

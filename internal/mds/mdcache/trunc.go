package mdcache

import (
	"context"
	"errors"
	"slices"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/striper"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// A truncation that shrinks a file is journaled with the setattr that
// makes it (Event.Truncs: the file, its old and new size, its layout).
// Once the event is durable the engine cuts the data objects and then
// journals that it did (Event.TruncsDone). Until then the journal is
// not trimmed past the truncation's event, so a crash in between leaves
// it in the journal: replay collects the truncations not recorded done
// and Resume finishes them (a cut that fails is retried at each Tick),
// so that no old bytes past the new size are exposed when the file
// grows again.

// errClosed: the engine was closed before a finished truncation was
// journaled (the next holder of the rank finishes it again).
var errClosed = errors.New("mdcache: rank closed")

// pendingTrunc is the unfinished truncations of one file, merged: data
// past to (the newest truncation's size), up to from (the largest size
// any of them cut from), is to be removed.
type pendingTrunc struct {
	from, to uint64
	layout   layout.Layout
	// starts are the journal positions of the unfinished truncations'
	// events, ascending: the journal is not trimmed past starts[0].
	starts []uint64
	// running: a cut is under way (again: run another after it);
	// failed: the last cut failed (Tick retries it).
	running, again, failed bool
}

// noteTruncs records the truncations ev begins and those it finishes;
// pos is ev's journal position. c.mu is held.
func (c *Cache) noteTruncs(ev *Event, pos uint64) {
	for _, tr := range ev.Truncs {
		p := c.truncs[tr.Ino]
		if p == nil {
			p = &pendingTrunc{}
			c.truncs[tr.Ino] = p
		}
		p.from, p.to, p.layout = max(p.from, tr.From), tr.To, tr.Layout
		p.starts = append(p.starts, pos)
	}
	for _, td := range ev.TruncsDone {
		p := c.truncs[td.Ino]
		if p == nil {
			continue
		}
		i, _ := slices.BinarySearch(p.starts, td.Pos+1)
		p.starts = p.starts[i:]
		if len(p.starts) == 0 {
			delete(c.truncs, td.Ino)
		}
	}
}

// trimLimit is the journal position write-back may trim to: pos, or the
// event of the oldest unfinished truncation. c.mu is held.
func (c *Cache) trimLimit(pos uint64) uint64 {
	for _, p := range c.truncs {
		pos = min(pos, p.starts[0])
	}
	return pos
}

// truncate sets a file's size; the data past the new size is removed
// once the change is durable (finishTrunc).
func (c *Cache) truncate(t *txn, ci *cinode, size uint64) {
	old := ci.in.Size
	if size == old {
		return
	}
	ci.in.Size = size
	c.addRStat(t, c.parentDir(ci), int64(size)-int64(old), 0, 0)
	if size > old || ci.in.Layout == nil {
		return
	}
	ino := ci.in.Ino
	t.ev.Truncs = append(t.ev.Truncs, Trunc{Ino: ino, From: old, To: size, Layout: *ci.in.Layout})
	t.after = append(t.after, func() {
		if c.hooks != nil && c.hooks.noTruncData {
			return // as a crash before the data was cut
		}
		c.finishTrunc(ino)
	})
}

// finishTrunc cuts ino's data as its pending truncations say, then
// journals that they are done. It keeps bytes below the file's current
// size (a client may have written there since). One cut of a file runs
// at a time: a truncation begun meanwhile is cut after it; a failed cut
// is retried at the next Tick. c.mu is not held.
func (c *Cache) finishTrunc(ino mdtypes.Ino) {
	for {
		c.mu.Lock()
		p := c.truncs[ino]
		if p == nil || c.closed || p.running {
			if p != nil {
				p.again = true
			}
			c.mu.Unlock()
			return
		}
		p.running, p.again, p.failed = true, false, false
		from, to, l, upTo := p.from, p.to, p.layout, p.starts[len(p.starts)-1]
		if ci := c.inodes[ino]; ci != nil {
			to = max(to, ci.in.Size)
		}
		inject := c.hooks != nil && c.hooks.failTruncData > 0
		if inject {
			c.hooks.failTruncData--
		}
		c.mu.Unlock()
		err := errCrashPoint
		if !inject {
			err = c.cutData(ino, from, to, l)
		}
		if err != nil {
			c.log.Warn("truncating a file's data failed; retrying at the next tick", "ino", ino, "from", from, "to", to, "err", err)
		} else {
			err = c.truncDone(ino, upTo)
		}
		c.mu.Lock()
		p.running, p.failed = false, err != nil
		again := p.again && err == nil
		c.mu.Unlock()
		if cb := c.cfg.Events.Truncated; cb != nil {
			cb(uint64(ino), err)
		}
		if !again {
			return
		}
	}
}

// retryTruncs restarts the cuts that failed. c.mu is held.
func (c *Cache) retryTruncs() {
	if !c.resumed || c.closed {
		return
	}
	for ino, p := range c.truncs {
		if p.failed && !p.running {
			p.failed = false
			go c.finishTrunc(ino)
		}
	}
}

// cutData removes file ino's data past to, up to from.
func (c *Cache) cutData(ino mdtypes.Ino, from, to uint64, l layout.Layout) error {
	if to >= from {
		return nil
	}
	io, err := c.dataIO(l.Pool)
	if err != nil {
		return err
	}
	s, err := striper.New(io, l, striper.Options{})
	if err != nil {
		return err
	}
	return s.Truncate(context.Background(), uint64(ino), from, to)
}

// truncDone journals that ino's truncations begun up to journal
// position upTo are finished.
func (c *Cache) truncDone(ino mdtypes.Ino, upTo uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.backtraces[ino] = struct{}{} // object 0 may have gone with its backtrace
	if c.closed {
		return errClosed
	}
	if c.failed != nil {
		return c.failed
	}
	t := c.newTxn(0, 0, 0, 0)
	t.ev.TruncsDone = []TruncDone{{Ino: ino, Pos: upTo}}
	if err := t.commit(); err != nil {
		c.log.Error("journaling a finished truncation failed", "ino", ino, "err", err)
		return err
	}
	c.durable(func(error) {})
	return nil
}

// finishReplayedTruncs finishes, in the background, the truncations
// replay found unfinished. c.mu is held.
func (c *Cache) finishReplayedTruncs() {
	for ino := range c.truncs {
		go c.finishTrunc(ino)
	}
}

package rbd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/cls/lock"
	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// The exclusive lock (docs/RBD.md "The exclusive lock"), as librbd's: an
// image opened for writing takes, before its first change, the lock class's
// exclusive lock "rbd_lock" on the header object, with the cookie
// "auto <watch cookie> <instance>" — the watch it keeps on the header and
// its Conn's instance. Another opener that wants to write finds the lock
// held and asks the holder through a notify (request-lock); the holder
// finishes the I/O it has in progress, releases the lock and says so
// (released-lock), and takes it back, the same way, at its next change. A
// holder whose watch is gone from the header (it died, or lost its
// session for longer than the watch timeout) is fenced: its instance is
// added to the OSD map's blocklist, the opener waits for the map that
// lists it, and only then breaks the lock and takes it.

// lockName is the lock class lock an image's writer holds on its header.
const lockName = "rbd_lock"

// noticeTimeout is how long a notice's sender waits for the watchers'
// acknowledgements, and a requester for the holder to release before it
// asks again.
const noticeTimeout = 5 * time.Second

// lockCookie is the cookie an opener locks with: its watch and instance.
func lockCookie(watch uint64, instance string) string {
	return fmt.Sprintf("auto %d %s", watch, instance)
}

// parseLockCookie splits what lockCookie made; ok is false for a cookie
// not made so (a lock someone took by hand).
func parseLockCookie(cookie string) (watch uint64, instance string, ok bool) {
	f := strings.Fields(cookie)
	if len(f) != 3 || f[0] != "auto" {
		return 0, "", false
	}
	w, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return w, f[2], true
}

// lockStep is what an opener that wants the lock does next.
type lockStep int

const (
	// stepLock: the lock is free: take it.
	stepLock lockStep = iota
	// stepRequest: the holder is alive (its watch is on the header):
	// ask it to release, and wait.
	stepRequest
	// stepBreak: the holder is this process, with a watch it no longer
	// has (the watch was lost and made again): break the lock, no fence.
	stepBreak
	// stepFence: the holder's watch is gone: blocklist its instance,
	// wait for the map that has it, break the lock.
	stepFence
	// stepForeign: the lock is held by something that is not an image
	// opener (a cookie not of ours): give up with ErrBusy.
	stepForeign
)

func (s lockStep) String() string {
	return [...]string{"lock", "request", "break", "fence", "foreign"}[s]
}

// nextLockStep decides what an opener of instance me does when its lock
// attempt failed with EBUSY, from the lock's holders and the header's
// watchers at that moment. It is a pure function: the table tests in
// exlock_test.go pin it down.
func nextLockStep(me string, holders []lock.Holder, watchers []rados.WatcherID) (lockStep, lock.Holder) {
	if len(holders) == 0 {
		return stepLock, lock.Holder{}
	}
	h := holders[0]
	watch, instance, ok := parseLockCookie(h.Cookie)
	switch {
	case !ok:
		return stepForeign, h
	case slices.Contains(watchers, rados.WatcherID{Client: h.Entity, Cookie: watch}):
		return stepRequest, h
	case instance == me:
		return stepBreak, h
	default:
		return stepFence, h
	}
}

// owns reports whether img holds the exclusive lock.
func (img *Image) owns() bool {
	img.lk.Lock()
	defer img.lk.Unlock()
	return img.owner
}

// LockOwner reports whether this Image holds the image's exclusive lock
// (it takes it at its first change and gives it up when another opener
// asks).
func (img *Image) LockOwner() bool { return img.owns() }

// lockChanged returns a channel closed at the next notice that the lock
// changed hands (or the watch was lost).
func (img *Image) lockChanged() <-chan struct{} {
	img.lk.Lock()
	defer img.lk.Unlock()
	return img.changed
}

// wakeLockWaiters closes the channel lockChanged returned (lk held).
func (img *Image) wakeLockWaiters() {
	close(img.changed)
	img.changed = make(chan struct{})
}

// header is the header object's name.
func (img *Image) headerObject() string { return clsrbd.HeaderPrefix + img.id }

// watchHeader watches the header (if this Image does not already): the
// notices of other openers arrive through it.
func (img *Image) watchHeader(ctx context.Context) error {
	img.lk.Lock()
	has := img.watch != nil
	img.lk.Unlock()
	if has {
		return nil
	}
	w, err := img.pool.io.Watch(ctx, img.headerObject(), img.handleNotice)
	if err != nil {
		return fmt.Errorf("rbd: image %q: watch the header: %w", img.name, classify(err))
	}
	img.lk.Lock()
	defer img.lk.Unlock()
	if img.watch != nil { // another caller won the race
		go func() { _ = w.Unwatch(context.WithoutCancel(ctx)) }()
		return nil
	}
	img.watch = w
	return nil
}

// handleNotice handles an event of the header watch. It runs on the
// watch's delivery goroutine, one event at a time, so it never waits:
// what takes time (releasing the lock) runs on its own goroutine.
func (img *Image) handleNotice(ev rados.WatchEvent) []byte {
	img.lk.Lock()
	defer img.lk.Unlock()
	if ev.Err != nil {
		// The watch is lost: the lock's cookie names it, so others will
		// find this holder dead and fence it. Stop writing as owner,
		// and watch again (and refresh, for notices may have been
		// missed) at the next call.
		img.pool.log.Warn("rbd: header watch lost", "image", img.name, "err", ev.Err)
		img.watch = nil
		img.owner = false
		img.stale.Store(true)
		img.wakeLockWaiters()
		return nil
	}
	n, err := decodeNotice(ev.Payload)
	if err != nil {
		img.pool.log.Warn("rbd: bad header notice", "image", img.name, "from", ev.Notifier, "err", err)
		return nil
	}
	if img.watch != nil && n.Cookie == img.watch.Cookie() && n.Instance == img.pool.conn.Instance() {
		return nil // our own
	}
	switch n.Kind {
	case noticeHeaderUpdate:
		img.stale.Store(true)
	case noticeRequestLock:
		switch {
		case img.owner && !img.releasing:
			img.releasing = true
			go img.release(context.Background())
		case img.acquiring:
			img.requested = true // released once taken and used once
		}
	case noticeReleasedLock, noticeAcquiredLock:
		img.wakeLockWaiters()
	}
	return nil
}

// notice sends n to the header's watchers and waits (at most
// noticeTimeout) for their acknowledgements. A failure is logged, not
// returned: a notice only saves the others time.
func (img *Image) notice(ctx context.Context, kind noticeKind) {
	img.lk.Lock()
	n := notice{Kind: kind, Instance: img.pool.conn.Instance()}
	if img.watch != nil {
		n.Cookie = img.watch.Cookie()
	}
	img.lk.Unlock()
	if _, err := img.pool.io.Notify(ctx, img.headerObject(), n.encode(), noticeTimeout); err != nil {
		img.pool.log.Info("rbd: header notice failed", "image", img.name, "notice", kind.String(), "err", err)
	}
}

// release gives the lock up at another opener's request: once the I/O in
// progress is done (the gate held exclusively), it unlocks and tells the
// others.
func (img *Image) release(ctx context.Context) {
	released, err := img.unlockHeld(ctx)
	img.lk.Lock()
	img.releasing = false
	img.lk.Unlock()
	if err != nil {
		img.pool.log.Warn("rbd: release the exclusive lock", "image", img.name, "err", err)
		return
	}
	if released {
		img.notice(ctx, noticeReleasedLock)
	}
}

// unlockHeld unlocks the lock if this Image holds it, once the I/O in
// progress is done; released says whether it did.
func (img *Image) unlockHeld(ctx context.Context) (released bool, _ error) {
	if err := img.gate.lock(ctx); err != nil {
		return false, err
	}
	defer img.gate.unlock()
	if img.owns() {
		if err := img.flushLocked(ctx); err != nil { // dirty data goes before the lock
			return false, err
		}
	}
	img.lk.Lock()
	owner, cookie := img.owner, img.cookie
	img.owner = false
	img.lk.Unlock()
	img.cache.dropAllClean() // the next holder may change the image
	if !owner {
		return false, nil
	}
	_, err := img.pool.io.Exec(ctx, img.headerObject(), lock.Class, "unlock", lock.Request{Name: lockName, Cookie: cookie}.Encode())
	if err != nil && !errors.Is(err, rados.ErrNotFound) { // not found: broken meanwhile
		return false, fmt.Errorf("rbd: image %q: unlock: %w", img.name, classify(err))
	}
	return true, nil
}

// acquire takes the exclusive lock for img, asking its holder to release
// it or fencing a dead holder as nextLockStep says. One caller acquires at
// a time; the others wait for it and find the lock held. The caller holds
// the gate, so a request that arrives meanwhile (remembered, and served
// once the lock is taken) waits for the caller's call to finish.
func (img *Image) acquire(ctx context.Context) error {
	select {
	case img.acq <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-img.acq }()
	img.lk.Lock()
	img.acquiring, img.requested = true, false
	img.lk.Unlock()
	defer func() {
		img.lk.Lock()
		defer img.lk.Unlock()
		img.acquiring = false
		if img.owner && img.requested && !img.releasing {
			img.releasing = true
			go img.release(context.Background())
		}
		img.requested = false
	}()
	me := img.pool.conn.Instance()
	for asked := 0; ; {
		if img.owns() {
			return nil
		}
		if err := img.watchHeader(ctx); err != nil {
			return err
		}
		changed := img.lockChanged()
		img.lk.Lock()
		cookie := lockCookie(img.watch.Cookie(), me)
		img.lk.Unlock()
		_, err := img.pool.io.Exec(ctx, img.headerObject(), lock.Class, "lock", lock.Request{Name: lockName, Type: lock.Exclusive, Cookie: cookie}.Encode())
		if err == nil {
			img.om.reload.Store(true) // the last holder may have changed the object map
			img.cache.dropAllClean()  // and the data
			img.lk.Lock()
			img.owner, img.cookie = true, cookie
			img.lk.Unlock()
			img.pool.log.Debug("rbd: acquired the exclusive lock", "image", img.name, "cookie", cookie)
			return nil
		}
		if oe := (*rados.OpError)(nil); !errors.As(err, &oe) || oe.Errno != wire.EBUSY {
			return fmt.Errorf("rbd: image %q: take the exclusive lock: %w", img.name, classify(err))
		}
		holders, watchers, err := img.lockState(ctx)
		if err != nil {
			return err
		}
		step, h := nextLockStep(me, holders, watchers)
		img.pool.log.Debug("rbd: exclusive lock held", "image", img.name, "holder", h.Entity, "cookie", h.Cookie, "step", step.String())
		switch step {
		case stepLock:
		case stepForeign:
			return fmt.Errorf("%w: image %q is locked by %s with cookie %q, not by an image opener; break that lock by hand (EBUSY)", ErrBusy, img.name, h.Entity, h.Cookie)
		case stepRequest:
			asked++
			img.notice(ctx, noticeRequestLock)
			t := time.NewTimer(noticeTimeout)
			select {
			case <-changed:
			case <-t.C: // ask again (the holder may be busy, or dying: its watch will time out)
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("rbd: image %q: waiting for %s to release the exclusive lock (asked %d times): %w", img.name, h.Entity, asked, context.Cause(ctx))
			}
			t.Stop()
		case stepFence:
			_, instance, _ := parseLockCookie(h.Cookie)
			if err := img.fence(ctx, instance); err != nil {
				return err
			}
			fallthrough
		case stepBreak:
			_, err := img.pool.io.Exec(ctx, img.headerObject(), lock.Class, "break_lock", lock.BreakRequest{Name: lockName, Entity: h.Entity, Cookie: h.Cookie}.Encode())
			if err != nil && !errors.Is(err, rados.ErrNotFound) {
				return fmt.Errorf("rbd: image %q: break the lock of %s: %w", img.name, h.Entity, classify(err))
			}
			img.pool.log.Info("rbd: broke the exclusive lock of a dead holder", "image", img.name, "holder", h.Entity, "cookie", h.Cookie, "fenced", step == stepFence)
		}
	}
}

// lockState reads the lock's holders and the header's watchers.
func (img *Image) lockState(ctx context.Context) ([]lock.Holder, []rados.WatcherID, error) {
	out, err := img.pool.io.Exec(ctx, img.headerObject(), lock.Class, "info", lock.Request{Name: lockName}.Encode())
	if err != nil {
		return nil, nil, fmt.Errorf("rbd: image %q: lock info: %w", img.name, classify(err))
	}
	st, err := lock.DecodeState(out)
	if err != nil {
		return nil, nil, fmt.Errorf("rbd: image %q: %w", img.name, err)
	}
	ws, err := img.pool.io.ListWatchers(ctx, img.headerObject())
	if err != nil {
		return nil, nil, fmt.Errorf("rbd: image %q: list watchers: %w", img.name, classify(err))
	}
	ids := make([]rados.WatcherID, len(ws))
	for i, w := range ws {
		ids[i] = w.WatcherID
	}
	return st.Holders, ids, nil
}

// fence blocklists instance in the OSD map and waits until this client's
// map lists it: from then on the OSDs refuse its operations, so a holder
// that only seemed dead cannot write after the new holder has begun.
func (img *Image) fence(ctx context.Context, instance string) error {
	conn := img.pool.conn
	if _, err := conn.MonCommand(ctx, "osd blocklist add", map[string]string{"addr": instance}); err != nil {
		return fmt.Errorf("rbd: image %q: fence the dead lock holder %s (osd blocklist add): %w", img.name, instance, err)
	}
	r, err := conn.MonCommand(ctx, "osd stat", nil)
	if err != nil {
		return fmt.Errorf("rbd: image %q: fence %s: osd stat: %w", img.name, instance, err)
	}
	var st struct {
		Epoch uint64 `json:"epoch"`
	}
	if err := json.Unmarshal(r.Data, &st); err != nil {
		return fmt.Errorf("rbd: image %q: fence %s: osd stat reply %q: %w", img.name, instance, r.Data, err)
	}
	if err := conn.WaitForEpoch(ctx, st.Epoch); err != nil {
		return fmt.Errorf("rbd: image %q: fence %s: waiting for map %d: %w", img.name, instance, st.Epoch, err)
	}
	img.pool.log.Warn("rbd: fenced the dead holder of the exclusive lock", "image", img.name, "instance", instance, "epoch", st.Epoch)
	return nil
}

// Close writes the cache back (if on; a failure is returned, and the
// lock then kept), releases the exclusive lock if this Image holds it
// (once the I/O in progress is done) and ends its header watch. The Image
// must not be used after.
func (img *Image) Close(ctx context.Context) error {
	cerr := img.closeCache(ctx)
	released, err := img.unlockHeld(ctx)
	err = errors.Join(cerr, err)
	if released {
		img.notice(ctx, noticeReleasedLock)
	}
	img.lk.Lock()
	w := img.watch
	img.watch = nil
	img.lk.Unlock()
	if w != nil {
		err = errors.Join(err, w.Unwatch(ctx))
	}
	return err
}

// logger returns the pool's logger (discarding by default).
func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// announce tells the other openers that the header changed, unless *err
// is set. Header changes defer it before they release the gate, so it
// runs after (a notice waits for the watchers' acknowledgements).
func (img *Image) announce(ctx context.Context, err *error) {
	if *err == nil {
		img.notice(ctx, noticeHeaderUpdate)
	}
}

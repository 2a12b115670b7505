package s3gw

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// The lifecycle worker (docs/S3.md, "Lifecycle"): a pass over each
// bucket with enabled rules expires what they say — current versions
// (removed, or hidden by a delete marker in a versioned bucket, as
// DELETE does), noncurrent versions, expired object delete markers —
// and aborts stale multipart uploads.
//
// Several gateways may serve one bucket, and each runs the worker. A
// bucket's pass is taken by one of them at a time through its lease,
// the xattr of s3.lc.BUCKET_ID replaced only by compare-and-write:
// holder, until when, the pass's start, and the index key it has done
// everything before. The holder renews the lease, saving that marker,
// after every batch of names; a gateway that dies leaves the lease to
// run out, and the next pass resumes at the marker. Every removal is
// also a compare-and-swap over the version it judged (read again just
// before; its stamp unchanged), so even two workers at once — a lease
// outlived by a stalled holder — never remove a version that was
// replaced meanwhile; what they could do twice is only add a delete
// marker for the same expiry, which the lease makes a matter of clocks
// more than LifecycleConfig.LeaseTTL apart.

// LifecycleConfig is how the lifecycle worker runs.
type LifecycleConfig struct {
	// Day is the length of a lifecycle day: rules' Days count these,
	// and a bucket gets one pass a day (default 24h; shorter ones are
	// for trying rules quickly, as radosgw's rgw_lc_debug_interval, and
	// are not rounded to midnight).
	Day time.Duration
	// MaxOps bounds the removals a gateway's passes make per second
	// (0: unbounded).
	MaxOps float64
	// LeaseTTL is how long a bucket's lease lasts unless renewed
	// (default 2m); gateways' clocks should agree better than that.
	LeaseTTL time.Duration
	// Batch is how many names a pass does between lease renewals
	// (default 100).
	Batch int
	// Wait waits d or until ctx ends (a timer when nil); tests make
	// pacing virtual.
	Wait func(ctx context.Context, d time.Duration) error
}

func (c LifecycleConfig) withDefaults() LifecycleConfig {
	if c.Day <= 0 {
		c.Day = 24 * time.Hour
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 2 * time.Minute
	}
	if c.Batch <= 0 {
		c.Batch = 100
	}
	if c.Wait == nil {
		c.Wait = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		}
	}
	return c
}

func (g *Gateway) lcDay() time.Duration { return g.cfg.Lifecycle.Day }

// lcMetrics are the lifecycle worker's counters.
type lcMetrics struct {
	actions *prometheus.CounterVec // by action
	passes  *prometheus.CounterVec // by result
}

func newLCMetrics(reg prometheus.Registerer) *lcMetrics {
	m := &lcMetrics{
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuttle_s3_lifecycle_actions_total",
			Help: "What lifecycle passes did: expire (current versions), noncurrent, delete_marker, abort (multipart uploads)."}, []string{"action"}),
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuttle_s3_lifecycle_passes_total",
			Help: "Bucket lifecycle passes by result: done, resumed (done after another gateway's stopped pass), busy (another gateway holds the bucket), failed."}, []string{"result"}),
	}
	if reg != nil {
		reg.MustRegister(m.actions, m.passes)
	}
	return m
}

// leasePlan is what a gateway does about a bucket's lease.
type leasePlan uint8

const (
	leaseSkip   leasePlan = iota // held by another, or the day's pass is done
	leaseStart                   // a new pass
	leaseResume                  // a pass stopped half way, from its marker
)

// planLease decides, from the lease l read, whether the gateway me
// runs the bucket's pass at now (force: whether or not today's pass is
// done), and the lease it then writes. Pure: the table test is
// TestPlanLease.
func planLease(l meta.LifecycleLease, me string, now time.Time, day, ttl time.Duration, force bool) (leasePlan, meta.LifecycleLease) {
	if l.Holder != "" && l.Holder != me && now.Before(l.Until) {
		return leaseSkip, l
	}
	if !l.Done && !l.Pass.IsZero() {
		return leaseResume, meta.LifecycleLease{Holder: me, Until: now.Add(ttl), Pass: l.Pass, Marker: l.Marker, Uploads: l.Uploads}
	}
	if !force && l.Done && now.Sub(l.Pass) < day {
		return leaseSkip, l
	}
	return leaseStart, meta.LifecycleLease{Holder: me, Until: now.Add(ttl), Pass: now}
}

// LifecycleResult is what lifecycle passes did.
type LifecycleResult struct {
	Buckets       []LifecycleBucket `json:"buckets"`
	Expired       int               `json:"expired"`         // current versions removed or hidden
	Noncurrent    int               `json:"noncurrent"`      // noncurrent versions removed
	DeleteMarkers int               `json:"delete_markers"`  // expired object delete markers removed
	Aborted       int               `json:"aborted_uploads"` // multipart uploads aborted
}

// LifecycleBucket is one bucket's pass.
type LifecycleBucket struct {
	Bucket string `json:"bucket"`
	// Outcome: done, resumed, busy (another gateway holds it), skipped
	// (its pass of the day is done), failed.
	Outcome       string `json:"outcome"`
	Expired       int    `json:"expired"`
	Noncurrent    int    `json:"noncurrent"`
	DeleteMarkers int    `json:"delete_markers"`
	Aborted       int    `json:"aborted_uploads"`
	Error         string `json:"error,omitempty"`
}

// RunLifecycle runs the lifecycle pass of each bucket named (none: every
// bucket with enabled rules) whose pass is due — or every one with
// force, as `cuttle s3 lifecycle run` does. A bucket whose lease
// another gateway holds is left to it. The error is the first bucket's
// that failed (the others still run).
func (g *Gateway) RunLifecycle(ctx context.Context, buckets []string, force bool) (LifecycleResult, error) {
	var bs []meta.Bucket
	if len(buckets) == 0 {
		all, err := g.meta.AllBuckets(ctx)
		if err != nil {
			return LifecycleResult{}, err
		}
		for _, b := range all {
			if lcActive(b.Lifecycle) {
				bs = append(bs, b)
			}
		}
	} else {
		for _, name := range buckets {
			b, err := g.meta.GetBucket(ctx, name)
			if err != nil {
				return LifecycleResult{}, err
			}
			bs = append(bs, b)
		}
	}
	res := LifecycleResult{Buckets: []LifecycleBucket{}}
	var first error
	for _, b := range bs {
		out, err := g.lifecyclePass(ctx, b, force)
		if err != nil {
			out.Outcome, out.Error = "failed", err.Error()
			if first == nil {
				first = fmt.Errorf("bucket %s: %w", b.Name, err)
			}
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
		}
		g.lcm.passes.WithLabelValues(out.Outcome).Inc()
		res.Buckets = append(res.Buckets, out)
		res.Expired += out.Expired
		res.Noncurrent += out.Noncurrent
		res.DeleteMarkers += out.DeleteMarkers
		res.Aborted += out.Aborted
	}
	return res, first
}

// errLeaseLost: another gateway took the bucket's lease (this one
// stalled past it); the pass stops and leaves the bucket to it.
var errLeaseLost = errors.New("s3gw: lifecycle lease lost")

// lcPass is one bucket's pass under way.
type lcPass struct {
	g     *Gateway
	b     meta.Bucket
	ix    *meta.Index
	lease meta.LeaseRecord
	out   *LifecycleBucket
	cfg   LifecycleConfig
	// pacing: removals done and when the pass started, for MaxOps.
	ops   int
	start time.Time
}

// lifecyclePass runs bucket b's pass if its lease lets this gateway.
func (g *Gateway) lifecyclePass(ctx context.Context, b meta.Bucket, force bool) (LifecycleBucket, error) {
	out := LifecycleBucket{Bucket: b.Name}
	cfg := g.cfg.Lifecycle
	rec, err := g.meta.GetLease(ctx, b.ID)
	if err != nil {
		return out, err
	}
	now := g.meta.Now()
	plan, l := planLease(rec.Lease, g.lcHolder, now, cfg.Day, cfg.LeaseTTL, force)
	switch plan {
	case leaseSkip:
		out.Outcome = "skipped"
		if rec.Lease.Holder != "" && rec.Lease.Holder != g.lcHolder && now.Before(rec.Lease.Until) {
			out.Outcome = "busy"
		}
		return out, nil
	case leaseResume:
		out.Outcome = "resumed"
	default:
		out.Outcome = "done"
	}
	rec, err = g.meta.SwapLease(ctx, b.ID, rec, l)
	if errors.Is(err, meta.ErrConflict) {
		out.Outcome = "busy" // another gateway took it first
		return out, nil
	}
	if err != nil {
		return out, err
	}
	ix, err := g.meta.Index(ctx, b)
	if err != nil {
		return out, err
	}
	p := &lcPass{g: g, b: b, ix: ix, lease: rec, out: &out, cfg: cfg, start: now}
	if err := p.run(ctx); err != nil {
		if errors.Is(err, errLeaseLost) {
			out.Outcome = "busy"
			return out, nil
		}
		return out, err
	}
	return out, nil
}

// renew saves the pass's progress and extends its lease; a lease taken
// by another gateway meanwhile is errLeaseLost.
func (p *lcPass) renew(ctx context.Context, f func(*meta.LifecycleLease)) error {
	l := p.lease.Lease
	f(&l)
	if l.Holder != "" {
		l.Until = p.g.meta.Now().Add(p.cfg.LeaseTTL)
	}
	rec, err := p.g.meta.SwapLease(ctx, p.b.ID, p.lease, l)
	if errors.Is(err, meta.ErrConflict) {
		return errLeaseLost
	}
	if err != nil {
		return err
	}
	p.lease = rec
	return nil
}

// pace waits as MaxOps says before the next removal.
func (p *lcPass) pace(ctx context.Context) error {
	p.ops++
	if p.cfg.MaxOps <= 0 {
		return nil
	}
	due := p.start.Add(time.Duration(float64(p.ops) / p.cfg.MaxOps * float64(time.Second)))
	if d := due.Sub(p.g.meta.Now()); d > 0 {
		return p.cfg.Wait(ctx, d)
	}
	return nil
}

func (p *lcPass) run(ctx context.Context) error {
	rules := p.b.Lifecycle
	if !p.lease.Lease.Uploads {
		if err := p.abortUploads(ctx, rules); err != nil {
			return err
		}
		if err := p.renew(ctx, func(l *meta.LifecycleLease) { l.Uploads = true }); err != nil {
			return err
		}
	}
	type job struct {
		name string
		vs   []meta.Entry
	}
	for {
		// A batch of names from the marker, then their actions, then
		// the marker moves past them.
		var batch []job
		start := p.lease.Lease.Marker
		err := p.ix.Scan(ctx, start, "", func(name string, vs []meta.Entry) bool {
			if len(batch) == p.cfg.Batch {
				return true
			}
			if name < start {
				return false // the tail of a name the marker is inside
			}
			batch = append(batch, job{name, vs})
			return false
		})
		if err != nil {
			return err
		}
		for _, j := range batch {
			if err := p.name(ctx, rules, j.name, j.vs); err != nil {
				return err
			}
		}
		if len(batch) < p.cfg.Batch {
			return p.renew(ctx, func(l *meta.LifecycleLease) { l.Marker, l.Done, l.Holder, l.Until = "", true, "", time.Time{} })
		}
		next := batch[len(batch)-1].name + "\x01"
		if err := p.renew(ctx, func(l *meta.LifecycleLease) { l.Marker = next }); err != nil {
			return err
		}
	}
}

// name carries out the rules' actions on one name.
func (p *lcPass) name(ctx context.Context, rules []meta.LifecycleRule, name string, vs []meta.Entry) error {
	acts := lcPlanName(rules, name, vs, p.b.Versioning, p.g.meta.Now(), p.cfg.Day)
	for _, a := range acts {
		if err := p.pace(ctx); err != nil {
			return err
		}
		var err error
		done := false
		switch a.kind {
		case lcExpireCurrent:
			if a.version == meta.NullVersion { // never versioned: the object goes
				done, err = p.g.removeIfSame(ctx, p.b, p.ix, name, meta.NullVersion, a.stamp)
				break
			}
			done, err = p.expireVersioned(ctx, name, a.stamp)
		default:
			if a.kind == lcRemoveMarker && p.b.Versioning == "" {
				continue
			}
			done, err = p.g.removeIfSame(ctx, p.b, p.ix, name, a.version, a.stamp)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// One name's failure does not stop the pass: the next
			// pass tries it again.
			p.g.log.Warn("lifecycle", "bucket", p.b.Name, "key", name, "action", a.kind.String(), "err", err)
			continue
		}
		if !done {
			continue
		}
		p.g.lcm.actions.WithLabelValues(a.kind.String()).Inc()
		switch a.kind {
		case lcExpireCurrent:
			p.out.Expired++
		case lcRemoveNoncurrent:
			p.out.Noncurrent++
		case lcRemoveMarker:
			p.out.DeleteMarkers++
		}
	}
	return nil
}

// expireVersioned hides name's current version, of stamp, behind a
// delete marker as DELETE does (a null one while suspended), unless a
// newer version came meanwhile or it is already one.
func (p *lcPass) expireVersioned(ctx context.Context, name string, stamp int64) (bool, error) {
	latest, err := p.ix.Latest(ctx, name)
	if errors.Is(err, meta.ErrNoSuchObject) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if latest.DeleteMarker || latest.VersionStamp() != stamp {
		return false, nil
	}
	if _, err := p.g.deleteVersion(ctx, &request{}, p.b, name, ""); err != nil {
		return false, err
	}
	return true, nil
}

// removeIfSame removes name's version id for good if it is still the
// version of stamp judged (its data on the garbage list first, then a
// compare-and-swap of its key to nothing, then the data), and says
// whether it did.
func (g *Gateway) removeIfSame(ctx context.Context, b meta.Bucket, ix *meta.Index, name, id string, stamp int64) (bool, error) {
	st, err := ix.Current(ctx, meta.VersionKey(name, id))
	if err != nil {
		return false, err
	}
	if !st.Live || st.Entry.VersionStamp() != stamp {
		return false, nil // gone, or replaced meanwhile
	}
	var gs []meta.Garbage
	for _, x := range st.Entry.Extents {
		gs = append(gs, meta.Garbage{ID: x.ID, Size: x.Size, BucketID: b.ID, Key: name})
	}
	if len(gs) > 0 {
		if err := g.meta.AddGarbage(ctx, gs...); err != nil {
			return false, err
		}
	}
	err = ix.RemoveVersion(ctx, name, id, st)
	if errors.Is(err, meta.ErrConflict) {
		return false, nil // changed meanwhile: the next pass judges it again
	}
	if err != nil {
		return false, err
	}
	if xs := st.Entry.Extents; len(xs) > 0 {
		ctx := context.WithoutCancel(ctx)
		g.background(func() { g.discard(ctx, xs...) })
	}
	return true, nil
}

// abortUploads aborts the bucket's multipart uploads the rules say are
// stale.
func (p *lcPass) abortUploads(ctx context.Context, rules []meta.LifecycleRule) error {
	if !lcHasAbort(rules) {
		return nil
	}
	after := ""
	for {
		ups, more, err := p.g.meta.ListUploads(ctx, p.b, "", after, 1000)
		if err != nil {
			return err
		}
		for _, u := range ups {
			after = meta.UploadMarker(u.Key, u.ID)
			if _, due := lcAbortDue(rules, u, p.g.meta.Now(), p.cfg.Day); !due {
				continue
			}
			if err := p.pace(ctx); err != nil {
				return err
			}
			err := p.g.abortUpload(ctx, p.b, u)
			if err != nil && !errors.Is(err, meta.ErrNoSuchUpload) {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				p.g.log.Warn("lifecycle: abort upload", "bucket", p.b.Name, "key", u.Key, "upload", u.ID, "err", err)
				continue
			}
			p.g.lcm.actions.WithLabelValues("abort").Inc()
			p.out.Aborted++
		}
		if !more || len(ups) == 0 {
			return nil
		}
	}
}

func lcHasAbort(rules []meta.LifecycleRule) bool {
	for _, r := range rules {
		if r.Enabled && r.AbortDays > 0 {
			return true
		}
	}
	return false
}

// LifecycleLoop runs due lifecycle passes now and then every check
// (at most a lifecycle day, at most 10 minutes) until ctx ends; tick
// gives the ticks (a time.Ticker's channel in `serve`).
func (g *Gateway) LifecycleLoop(ctx context.Context, tick <-chan time.Time) {
	for {
		res, err := g.RunLifecycle(ctx, nil, false)
		if err != nil && ctx.Err() == nil {
			g.log.Warn("lifecycle pass", "err", err)
		} else if n := res.Expired + res.Noncurrent + res.DeleteMarkers + res.Aborted; n > 0 {
			g.log.Info("lifecycle pass", slog.Int("expired", res.Expired), slog.Int("noncurrent", res.Noncurrent),
				slog.Int("delete_markers", res.DeleteMarkers), slog.Int("aborted_uploads", res.Aborted))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
	}
}

// LifecycleCheckInterval is how often a serving gateway looks for due
// lifecycle passes: a tenth of the lifecycle day, at most 10 minutes.
func (g *Gateway) LifecycleCheckInterval() time.Duration {
	return min(g.cfg.Lifecycle.Day/10, 10*time.Minute)
}

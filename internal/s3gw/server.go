package s3gw

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/internal/s3gw/sigv4"
	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// DefaultPool is the pool the gateway keeps everything in unless told.
const DefaultPool = ".cuttle.s3"

// Config is what a Gateway needs.
type Config struct {
	// IO is the gateway's pool (DefaultPool unless the operator names
	// another); every gateway of a cluster given the same pool serves
	// the same users and buckets.
	IO *rados.IOContext
	// Domain, when set, turns on virtual-host addressing: a request for
	// host "<bucket>.<Domain>" names the bucket by its host.
	Domain string
	// Region is the region the gateway reports and signs in (default
	// "us-east-1").
	Region string
	// Logger receives the gateway's events; nil discards them.
	Logger *slog.Logger
	// Now is the clock (time.Now when nil): signatures' skew, objects'
	// times.
	Now func() time.Time
	// KeyCacheTTL is how long a looked-up secret is trusted before it
	// is read again from RADOS, so a removed key stops working within
	// it (default 10s; negative: never cached).
	KeyCacheTTL time.Duration
	// KV is how bucket indexes are used.
	KV kv.Config
	// Lifecycle is how the lifecycle worker runs (lcworker.go).
	Lifecycle LifecycleConfig
	// Metrics, when set, receives the gateway's metrics.
	Metrics prometheus.Registerer
	// AccessLog, when set, receives a line per request (accesslog.go).
	AccessLog *AccessLog
}

// Gateway serves the S3 API.
type Gateway struct {
	cfg    Config
	log    *slog.Logger
	meta   *meta.Store
	data   *striper.Striper
	verify *sigv4.Verifier
	now    func() time.Time

	mu       sync.Mutex
	keys     map[string]cachedKey
	policies map[string]*bucketPolicy // parsed, by bucket name and text

	bg sync.WaitGroup // background cleanup (Quiesce)

	lcHolder string     // names this gateway in lifecycle leases
	lcm      *lcMetrics // the lifecycle worker's counters

	// tagRaceHook, set only by tests, runs in PutObjectTagging and
	// DeleteObjectTagging after the entry is checked (false) and after
	// it is read again to be swapped (true), so a test can land an
	// overwrite exactly there.
	tagRaceHook func(afterRead bool)
}

type cachedKey struct {
	user   meta.User
	secret string
	until  time.Time
}

// New returns a Gateway over cfg.IO.
func New(cfg Config) (*Gateway, error) {
	if cfg.IO == nil {
		return nil, errors.New("s3gw: no pool")
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.KeyCacheTTL == 0 {
		cfg.KeyCacheTTL = 10 * time.Second
	}
	cfg.Lifecycle = cfg.Lifecycle.withDefaults()
	l := layout.Default(cfg.IO.PoolID())
	l.Namespace = cfg.IO.Namespace()
	st, err := striper.New(cfg.IO, l, striper.Options{ObjectName: dataObjectName})
	if err != nil {
		return nil, fmt.Errorf("s3gw: %w", err)
	}
	g := &Gateway{
		cfg:  cfg,
		log:  cfg.Logger,
		meta: meta.NewStore(cfg.IO, cfg.KV, cfg.Now),
		data: st,
		now:  cfg.Now,
		keys: map[string]cachedKey{},

		policies: map[string]*bucketPolicy{},

		lcHolder: holderName(),
		lcm:      newLCMetrics(cfg.Metrics),
	}
	g.verify = sigv4.New(g.lookupSecret, cfg.Now, sigv4.WithHostBucket(g.hostBucket))
	return g, nil
}

// Meta returns the gateway's records (users, buckets).
func (g *Gateway) Meta() *meta.Store { return g.meta }

// lookupSecret finds a key's secret, through the cache.
func (g *Gateway) lookupSecret(ctx context.Context, access string) (string, error) {
	_, secret, err := g.lookupKey(ctx, access)
	return secret, err
}

func (g *Gateway) lookupKey(ctx context.Context, access string) (meta.User, string, error) {
	now := g.now()
	g.mu.Lock()
	c, ok := g.keys[access]
	g.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.user, c.secret, nil
	}
	u, secret, err := g.meta.LookupKey(ctx, access)
	if err != nil {
		if errors.Is(err, meta.ErrNoSuchKey) {
			return meta.User{}, "", fmt.Errorf("%w: %w", sigv4.ErrUnknownKey, err)
		}
		return meta.User{}, "", err
	}
	if g.cfg.KeyCacheTTL > 0 {
		g.mu.Lock()
		if len(g.keys) > 10000 {
			clear(g.keys)
		}
		g.keys[access] = cachedKey{user: u, secret: secret, until: now.Add(g.cfg.KeyCacheTTL)}
		g.mu.Unlock()
	}
	return u, secret, nil
}

// request is what routing learned about one request.
type request struct {
	id          string
	bucket, key string
	user        meta.User
	version     string // the versionId query parameter ("": none)
	sig         sigv4.Result
	http        *http.Request // for a policy's conditions
	code        string        // the S3 error code answered, for the access log
}

// holderName names a gateway in lifecycle leases: its host and a
// random suffix, so two gateways of one host differ.
func holderName() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "." + hex.EncodeToString(b[:])
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// hostBucket is the bucket a virtual-host-style request names by its
// host, or "".
func (g *Gateway) hostBucket(r *http.Request) string {
	if g.cfg.Domain == "" {
		return ""
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	b, _ := strings.CutSuffix(strings.ToLower(host), "."+strings.ToLower(g.cfg.Domain))
	if b == strings.ToLower(host) {
		return ""
	}
	return b
}

// split finds the bucket and key: from the host under Domain
// (virtual-host style), else from the path's first segment.
func (g *Gateway) split(r *http.Request) (bucket, key string) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	if b := g.hostBucket(r); b != "" {
		return b, path
	}
	bucket, key, _ = strings.Cut(path, "/")
	return bucket, key
}

// ServeHTTP authenticates and routes one S3 request.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rq := &request{id: newRequestID(), http: r}
	if g.cfg.AccessLog != nil {
		start := g.now()
		cw := &countingWriter{ResponseWriter: w}
		body := &countingBody{ReadCloser: r.Body}
		if r.Body == nil {
			body.ReadCloser = http.NoBody
		}
		r.Body, w = body, cw
		defer g.logAccess(r, rq, cw, body, start)
	}
	w.Header().Set("x-amz-request-id", rq.id)
	w.Header().Set("x-amz-id-2", rq.id)
	w.Header().Set("Server", "Cuttle")
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			g.log.Error("handler panic", "request", rq.id, "panic", fmt.Sprint(p))
			g.writeError(w, r, rq, errInternal)
		}
	}()
	rq.bucket, rq.key = g.split(r)
	if r.Method == http.MethodOptions && rq.bucket != "" {
		// A CORS preflight: never signed (browsers send no credentials).
		if err := g.preflight(w, r, rq); err != nil {
			g.writeError(w, r, rq, err)
		}
		return
	}
	g.corsActual(w, r, rq)
	sig, err := g.verify.Verify(r.Context(), r)
	switch {
	case errors.Is(err, sigv4.ErrMissing):
		// Anonymous: rq.user stays the zero User; ACLs decide.
		rq.sig = sigv4.Result{DecodedLength: -1}
	case err != nil:
		g.writeError(w, r, rq, err)
		return
	default:
		rq.sig = sig
		if sig.Body != nil {
			r.Body = readCloser{sig.Body, r.Body}
		}
		u, _, err := g.lookupKey(r.Context(), sig.AccessKey)
		if err != nil {
			g.writeError(w, r, rq, err)
			return
		}
		rq.user = u
	}
	if err := g.route(w, r, rq); err != nil {
		g.writeError(w, r, rq, err)
	}
}

type readCloser struct {
	r interface{ Read([]byte) (int, error) }
	c interface{ Close() error }
}

func (rc readCloser) Read(p []byte) (int, error) { return rc.r.Read(p) }
func (rc readCloser) Close() error               { return rc.c.Close() }

// logAccess writes the request's line to the access log.
func (g *Gateway) logAccess(r *http.Request, rq *request, cw *countingWriter, body *countingBody, start time.Time) {
	status := cw.status
	if status == 0 {
		status = http.StatusOK // nothing written: net/http answers 200
	}
	rec := AccessRecord{Time: start.UTC(), Remote: r.RemoteAddr, User: rq.user.Name, AccessKey: rq.sig.AccessKey, RequestID: rq.id,
		Method: r.Method, Bucket: rq.bucket, Key: rq.key, Operation: operationName(r, rq.bucket, rq.key), Status: status, ErrorCode: rq.code,
		BytesSent: cw.sent, BytesReceived: body.n, TotalMillis: float64(g.now().Sub(start)) / float64(time.Millisecond), UserAgent: r.UserAgent()}
	if err := g.cfg.AccessLog.Write(rec); err != nil {
		g.log.Warn("access log", "err", err)
	}
}

// handler serves one request of the gateway.
type handler func(g *Gateway, w http.ResponseWriter, r *http.Request, rq *request) error

// subresource is a ?NAME subresource's handlers by method; nil: the
// method is not allowed.
type subresource struct {
	name          string
	get, put, del handler
}

// serveSubresource serves the request with the first of subs its query
// names; ok is false when it names none.
func (g *Gateway) serveSubresource(w http.ResponseWriter, r *http.Request, rq *request, has func(string) bool, subs []subresource) (ok bool, err error) {
	for _, s := range subs {
		if !has(s.name) {
			continue
		}
		var h handler
		switch r.Method {
		case http.MethodGet:
			h = s.get
		case http.MethodPut:
			h = s.put
		case http.MethodDelete:
			h = s.del
		}
		if h == nil {
			return true, errMethodNotAllowed
		}
		return true, h(g, w, r, rq)
	}
	return false, nil
}

// route picks the handler from the method, bucket, key and query.
func (g *Gateway) route(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := r.URL.Query()
	has := func(k string) bool { _, ok := q[k]; return ok }
	if rq.bucket == "" {
		if r.Method == http.MethodGet {
			return g.listBuckets(w, r, rq)
		}
		return errMethodNotAllowed
	}
	if rq.key == "" {
		if ok, err := g.serveSubresource(w, r, rq, has, []subresource{
			{"acl", (*Gateway).getBucketACL, (*Gateway).putBucketACL, nil},
			{"policy", (*Gateway).getBucketPolicy, (*Gateway).putBucketPolicy, (*Gateway).deleteBucketPolicy},
			{"tagging", (*Gateway).getBucketTagging, (*Gateway).putBucketTagging, (*Gateway).deleteBucketTagging},
			{"cors", (*Gateway).getBucketCORS, (*Gateway).putBucketCORS, (*Gateway).deleteBucketCORS},
			{"ownershipControls", (*Gateway).getBucketOwnershipControls, (*Gateway).putBucketOwnershipControls, (*Gateway).deleteBucketOwnershipControls},
			{"publicAccessBlock", (*Gateway).getPublicAccessBlock, (*Gateway).putPublicAccessBlock, (*Gateway).deletePublicAccessBlock},
			{"policyStatus", (*Gateway).getBucketPolicyStatus, nil, nil},
			{"lifecycle", (*Gateway).getBucketLifecycle, (*Gateway).putBucketLifecycle, (*Gateway).deleteBucketLifecycle},
		}); ok {
			return err
		}
		for _, sub := range []string{"website", "replication", "encryption", "logging", "notification", "object-lock", "accelerate", "requestPayment", "analytics", "inventory", "metrics", "intelligent-tiering"} {
			if has(sub) {
				return errNotImplemented.withMessage("bucket %s is not supported yet", sub)
			}
		}
		switch r.Method {
		case http.MethodPut:
			if has("versioning") {
				return g.putBucketVersioning(w, r, rq)
			}
			return g.createBucket(w, r, rq)
		case http.MethodHead:
			return g.headBucket(w, r, rq)
		case http.MethodDelete:
			return g.deleteBucket(w, r, rq)
		case http.MethodPost:
			if has("delete") {
				return g.deleteObjects(w, r, rq)
			}
		case http.MethodGet:
			switch {
			case has("location"):
				return g.getBucketLocation(w, r, rq)
			case has("versioning"):
				return g.getBucketVersioning(w, r, rq)
			case has("uploads"):
				return g.listMultipartUploads(w, r, rq)
			case has("versions"):
				return g.listObjectVersions(w, r, rq)
			case q.Get("list-type") == "2":
				return g.listObjectsV2(w, r, rq)
			default:
				return g.listObjectsV1(w, r, rq)
			}
		}
		return errMethodNotAllowed
	}
	for _, sub := range []string{"retention", "legal-hold", "torrent", "restore", "select"} {
		if has(sub) {
			return errNotImplemented.withMessage("object %s is not supported yet", sub)
		}
	}
	if v, ok := q["versionId"]; ok {
		if !meta.ValidVersionID(v[0]) {
			return invalidVersionID(v[0])
		}
		rq.version = v[0]
	}
	if len(rq.key) > maxKeyLen {
		return errKeyTooLong.withMessage("Your key is %d bytes; the limit is %d.", len(rq.key), maxKeyLen)
	}
	if strings.IndexByte(rq.key, 0) >= 0 {
		return errInvalidArgument.withMessage("A key may not hold a NUL character.")
	}
	if ok, err := g.serveSubresource(w, r, rq, has, []subresource{
		{"tagging", (*Gateway).getObjectTagging, (*Gateway).putObjectTagging, (*Gateway).deleteObjectTagging},
		{"acl", (*Gateway).getObjectACL, (*Gateway).putObjectACL, nil},
		{"attributes", (*Gateway).getObjectAttributes, nil, nil},
	}); ok {
		return err
	}
	switch r.Method {
	case http.MethodPut:
		if has("uploadId") || has("partNumber") {
			if r.Header.Get("X-Amz-Copy-Source") != "" {
				return g.uploadPartCopy(w, r, rq)
			}
			return g.uploadPart(w, r, rq)
		}
		if r.Header.Get("X-Amz-Copy-Source") != "" {
			return g.copyObject(w, r, rq)
		}
		return g.putObject(w, r, rq)
	case http.MethodGet, http.MethodHead:
		if has("uploadId") && r.Method == http.MethodGet {
			return g.listParts(w, r, rq)
		}
		return g.getObject(w, r, rq)
	case http.MethodDelete:
		if has("uploadId") {
			return g.abortMultipartUpload(w, r, rq)
		}
		return g.deleteObject(w, r, rq)
	case http.MethodPost:
		if has("uploads") {
			return g.createMultipartUpload(w, r, rq)
		}
		if has("uploadId") {
			return g.completeMultipartUpload(w, r, rq)
		}
	}
	return errMethodNotAllowed
}

func (g *Gateway) owner(u meta.User) owner {
	return owner{ID: u.Name, DisplayName: u.DisplayName}
}

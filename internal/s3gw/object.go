package s3gw

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// Limits (S3's).
const (
	maxKeyLen     = 1024
	maxPutSize    = 5 << 30 // one PUT, and one part
	maxObjectSize = 5 << 40
	maxUserMeta   = 2 << 10
)

// storedHeaders are the request headers kept with an object and
// returned on GET and HEAD, besides Content-Type and x-amz-meta-*.
var storedHeaders = []string{"Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Language", "Expires", "X-Amz-Storage-Class", "X-Amz-Website-Redirect-Location"}

func quote(etag string) string { return `"` + etag + `"` }

// objectMeta collects the headers an object keeps.
func objectMeta(h http.Header) (map[string]string, error) {
	m := map[string]string{}
	user := 0
	for k, vs := range h {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-amz-meta-") {
			v := strings.Join(vs, ",")
			m[lk] = v
			user += len(lk) - len("x-amz-meta-") + len(v)
		}
	}
	if user > maxUserMeta {
		return nil, errMetadataTooLarge.withMessage("Your metadata headers are %d bytes; the limit is %d.", user, maxUserMeta)
	}
	for _, k := range storedHeaders {
		if v := h.Get(k); v != "" {
			m[strings.ToLower(k)] = v
		}
	}
	if sc, ok := m["x-amz-storage-class"]; ok {
		switch sc {
		case "STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING", "GLACIER", "DEEP_ARCHIVE", "GLACIER_IR", "OUTPOSTS", "EXPRESS_ONEZONE":
			if sc == "STANDARD" {
				delete(m, "x-amz-storage-class")
			}
		default:
			return nil, errInvalidStorageClass.withMessage("The storage class %q is not valid.", sc)
		}
	}
	return m, nil
}

func contentMD5(h http.Header) ([]byte, error) {
	v, ok := h["Content-Md5"]
	if !ok {
		return nil, nil
	}
	sum, err := base64.StdEncoding.DecodeString(strings.Join(v, ""))
	if err != nil || len(sum) != md5.Size {
		return nil, errInvalidDigest
	}
	return sum, nil
}

// bodySize is the length of the object a request carries.
func bodySize(r *http.Request, rq *request) (int64, error) {
	size := r.ContentLength
	if rq.sig.DecodedLength >= 0 {
		size = rq.sig.DecodedLength
	} else if v := r.Header.Get("X-Amz-Decoded-Content-Length"); v != "" {
		return 0, errInvalidRequest.withMessage("x-amz-decoded-content-length without a streaming x-amz-content-sha256")
	}
	if size < 0 {
		return 0, errMissingContentLength
	}
	if size > maxPutSize {
		return 0, errEntityTooLarge.withMessage("Your proposed upload of %d bytes exceeds the maximum of %d for one PUT; use a multipart upload.", size, int64(maxPutSize))
	}
	return size, nil
}

func (g *Gateway) putObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	b, err := g.bucketFor(ctx, rq, meta.PermWrite, "s3:PutObject")
	if err != nil {
		return err
	}
	if err := checkWriteACL(b, rq, r.Header); err != nil {
		return err
	}
	acl, err := g.requestACL(ctx, r.Header, rq.newOwner(b), b.Owner)
	if err != nil {
		return err
	}
	size, err := bodySize(r, rq)
	if err != nil {
		return err
	}
	want, err := contentMD5(r.Header)
	if err != nil {
		return err
	}
	ck, err := requestChecksum(r.Header)
	if err != nil {
		return err
	}
	m, err := objectMeta(r.Header)
	if err != nil {
		return err
	}
	tags, _, err := headerTags(r.Header)
	if err != nil {
		return err
	}
	ix, err := g.meta.Index(ctx, b)
	if err != nil {
		return err
	}
	// A conditional PUT is checked against the entry now, before the
	// body is stored, and again by commit against the entry it replaces,
	// so that a racing write cannot slip between check and commit.
	var old oldEntry // an enabled bucket's PUT replaces no entry
	if b.Versioning != meta.VersioningEnabled {
		old = prefetch(ctx, ix, rq.key)
	}
	check := writePreconditions(r.Header)
	if check != nil && b.Versioning == "" { // versioned: against the latest, in commitVersion
		cur, err := old()
		if err != nil {
			return err
		}
		if err := check(cur); err != nil {
			return err
		}
	}
	id := meta.NewID()
	if err := g.meta.AddGarbage(ctx, meta.Garbage{ID: id, Size: size, BucketID: b.ID, Key: rq.key}); err != nil {
		return err
	}
	n, sum, err := g.writeData(ctx, id, ck.tee(r.Body), size, maxPutSize)
	if err == nil && want != nil && !bytes.Equal(sum, want) {
		err = errBadDigest
	}
	var cks meta.Checksum
	if err == nil {
		cks, err = ck.verify(rq)
	}
	if err != nil {
		g.discard(ctx, meta.Extent{ID: id, Size: n})
		return err
	}
	en := meta.Entry{Size: n, ETag: hex.EncodeToString(sum), MTime: g.meta.Now(), ContentType: r.Header.Get("Content-Type"), Meta: m,
		Owner: rq.newOwner(b), ACL: acl, Tags: tags, Checksum: cks}
	if n > 0 {
		en.Extents = []meta.Extent{{ID: id, Size: n}}
	}
	vid, err := g.commitVersion(ctx, b, ix, rq.key, en, []uint64{id}, old, check)
	if err != nil {
		return err
	}
	setVersionID(w, vid)
	w.Header().Set("ETag", quote(en.ETag))
	setChecksumHeader(w, en.Checksum)
	g.setExpirationHeader(w, b, rq.key, en)
	w.WriteHeader(http.StatusOK)
	return nil
}

// writePreconditions returns the check of a conditional PUT's headers
// against the entry it replaces, nil without conditions.
func writePreconditions(h http.Header) func(meta.Stored) error {
	inm, im := h.Get("If-None-Match"), h.Get("If-Match")
	if inm == "" && im == "" {
		return nil
	}
	return func(cur meta.Stored) error {
		if inm == "*" && cur.Live {
			return errPreconditionFailed
		}
		if im != "" {
			if !cur.Live {
				return errNoSuchKey
			}
			if !etagMatches(im, cur.Entry.ETag) {
				return errPreconditionFailed
			}
		}
		return nil
	}
}

// discard removes data that will not be used, and its garbage record;
// what fails stays on the garbage list.
func (g *Gateway) discard(ctx context.Context, xs ...meta.Extent) {
	ctx = context.WithoutCancel(ctx)
	if err := g.removeData(ctx, xs...); err != nil {
		g.log.Warn("discard data", "err", err)
		return
	}
	ids := make([]uint64, len(xs))
	for i, x := range xs {
		ids[i] = x.ID
	}
	if err := g.meta.DropGarbage(ctx, ids...); err != nil {
		g.log.Warn("discard data", "err", err)
	}
}

// oldEntry is a read of the entry a write will replace, started early so
// it overlaps the write's data I/O.
type oldEntry func() (meta.Stored, error)

// prefetch starts reading key's entry.
func prefetch(ctx context.Context, ix *meta.Index, key string) oldEntry {
	type result struct {
		st  meta.Stored
		err error
	}
	ch := make(chan result, 1)
	go func() {
		st, err := ix.Current(ctx, key)
		ch <- result{st, err}
	}()
	var r *result
	return func() (meta.Stored, error) {
		if r == nil {
			v := <-ch
			r = &v
		}
		return r.st, r.err
	}
}

// commitAttempts bounds how often commit re-reads an entry that changed
// under it before answering SlowDown.
const commitAttempts = 16

// commit makes en key's entry, then, in the background once the client
// has its answer, retires the data of the entry it replaced: the new
// data's garbage records (pending) are dropped and the old data's added
// in one write, then the old data removed. A gateway stopped before that
// leaves garbage records, which the collector finishes.
//
// The entry is swapped in only if the index still holds what was read
// (meta.Index.Swap), so of two writers of one key each retires exactly
// the data it replaced, and check — a conditional PUT's preconditions,
// or nil — is judged against the entry actually replaced.
func (g *Gateway) commit(ctx context.Context, b meta.Bucket, ix *meta.Index, key string, en meta.Entry, pending []uint64, old oldEntry, check func(meta.Stored) error) error {
	if old == nil {
		old = prefetch(ctx, ix, key)
	}
	prev, err := old()
	for attempt := 0; ; attempt++ {
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(prev); err != nil {
				g.discardPending(ctx, en, pending) // never swapped in
				return err
			}
		}
		err = ix.Swap(ctx, key, prev, en)
		if err == nil {
			break
		}
		if !errors.Is(err, meta.ErrConflict) || attempt+1 == commitAttempts {
			return err
		}
		prev, err = ix.Current(ctx, key)
	}
	ctx = context.WithoutCancel(ctx)
	var retired []meta.Extent
	var add []meta.Garbage
	if prev.Live {
		keep := map[uint64]bool{}
		for _, x := range en.Extents {
			keep[x.ID] = true
		}
		for _, x := range prev.Entry.Extents {
			if !keep[x.ID] {
				retired = append(retired, x)
				add = append(add, meta.Garbage{ID: x.ID, Size: x.Size, BucketID: b.ID, Key: key})
			}
		}
	}
	if len(add) == 0 && len(pending) == 0 {
		return nil
	}
	g.background(func() {
		if err := g.meta.SwapGarbage(ctx, add, pending); err != nil {
			g.log.Warn("commit: garbage list", "bucket", b.Name, "key", key, "err", err)
			return
		}
		if len(retired) > 0 {
			g.discard(ctx, retired...)
		}
	})
	return nil
}

// discardPending removes the new data of an entry that will not be
// committed, in the background.
func (g *Gateway) discardPending(ctx context.Context, en meta.Entry, pending []uint64) {
	if len(pending) == 0 {
		return
	}
	size := map[uint64]int64{}
	for _, x := range en.Extents {
		size[x.ID] = x.Size
	}
	xs := make([]meta.Extent, len(pending))
	for i, id := range pending {
		xs[i] = meta.Extent{ID: id, Size: size[id]}
	}
	g.background(func() { g.discard(ctx, xs...) })
}

// background runs cleanup that the client need not wait for; Quiesce
// waits for it.
func (g *Gateway) background(f func()) {
	g.bg.Add(1)
	go func() {
		defer g.bg.Done()
		f()
	}()
}

// Quiesce waits until the cleanup started by finished requests is done.
func (g *Gateway) Quiesce() { g.bg.Wait() }

// etagMatches says whether an If-Match / If-None-Match list names etag.
func etagMatches(list, etag string) bool {
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		t = strings.TrimPrefix(t, "W/")
		if t == "*" || strings.Trim(t, `"`) == etag {
			return true
		}
	}
	return false
}

// checkReadPreconditions applies GET and HEAD's conditional headers (the
// S3 API reference, GetObject: If-Match before If-Unmodified-Since,
// If-None-Match before If-Modified-Since).
func checkReadPreconditions(h http.Header, en meta.Entry) error {
	mtime := en.MTime.Truncate(time.Second)
	im, inm := h.Get("If-Match"), h.Get("If-None-Match")
	if im != "" {
		if !etagMatches(im, en.ETag) {
			return errPreconditionFailed
		}
	} else if v := h.Get("If-Unmodified-Since"); v != "" {
		if t, err := http.ParseTime(v); err == nil && mtime.After(t) {
			return errPreconditionFailed
		}
	}
	if inm != "" {
		if etagMatches(inm, en.ETag) {
			return errNotModified
		}
	} else if v := h.Get("If-Modified-Since"); v != "" {
		if t, err := http.ParseTime(v); err == nil && !mtime.After(t) {
			return errNotModified
		}
	}
	return nil
}

// parseRange parses a single "bytes=" range against size; ok is false
// when the header is absent or not one range (S3 then sends it all).
func parseRange(h string, size int64) (off, n int64, ok bool, err error) {
	spec, found := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, nil
	}
	a, b, found := strings.Cut(spec, "-")
	if !found {
		return 0, 0, false, nil
	}
	if a == "" {
		k, perr := strconv.ParseInt(b, 10, 64)
		if perr != nil || k < 0 {
			return 0, 0, false, nil
		}
		if k == 0 || size == 0 {
			return 0, 0, false, errInvalidRange
		}
		k = min(k, size)
		return size - k, k, true, nil
	}
	start, perr := strconv.ParseInt(a, 10, 64)
	if perr != nil || start < 0 {
		return 0, 0, false, nil
	}
	end := size - 1
	if b != "" {
		e, perr := strconv.ParseInt(b, 10, 64)
		if perr != nil || e < start {
			return 0, 0, false, nil
		}
		end = min(e, size-1)
	}
	if start >= size {
		return 0, 0, false, errInvalidRange.withMessage("The requested range bytes=%s is not satisfiable for an object of %d bytes.", spec, size)
	}
	return start, end - start + 1, true, nil
}

// responseOverrides are GetObject's response-* query parameters.
var responseOverrides = map[string]string{
	"response-content-type":        "Content-Type",
	"response-content-language":    "Content-Language",
	"response-expires":             "Expires",
	"response-cache-control":       "Cache-Control",
	"response-content-disposition": "Content-Disposition",
	"response-content-encoding":    "Content-Encoding",
}

func (g *Gateway) setObjectHeaders(w http.ResponseWriter, en meta.Entry) {
	h := w.Header()
	ct := en.ContentType
	if ct == "" {
		ct = "binary/octet-stream"
	}
	h.Set("Content-Type", ct)
	h.Set("ETag", quote(en.ETag))
	h.Set("Last-Modified", en.MTime.UTC().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	for k, v := range en.Meta {
		if strings.HasPrefix(k, "x-amz-meta-") {
			// As S3 sends them: lowercase, so clients give back the
			// names they stored (botocore keeps the case it receives).
			h[k] = []string{v}
		} else {
			h[http.CanonicalHeaderKey(k)] = []string{v}
		}
	}
	if n := len(en.Extents); n > 1 || strings.Contains(en.ETag, "-") {
		if i := strings.LastIndexByte(en.ETag, '-'); i >= 0 {
			h.Set("x-amz-mp-parts-count", en.ETag[i+1:])
		}
	}
}

func (g *Gateway) getObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	b, _, en, err := g.requestObject(ctx, rq, meta.PermRead, "s3:GetObject")
	if err != nil {
		setDeleteMarkerHeaders(w, err)
		return err
	}
	if err := checkReadPreconditions(r.Header, en); err != nil {
		if err == errNotModified {
			w.Header().Set("ETag", quote(en.ETag))
			w.Header().Set("Last-Modified", en.MTime.UTC().Format(http.TimeFormat))
		}
		return err
	}
	off, n, ranged, err := parseRange(r.Header.Get("Range"), en.Size)
	if err != nil {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", en.Size))
		return err
	}
	if !ranged {
		off, n = 0, en.Size
	}
	part, err := requestedPart(r, en)
	if err != nil {
		return err
	}
	if part > 0 {
		off, n = partRange(en, part)
		ranged = n > 0
	}
	g.setObjectHeaders(w, en)
	setTaggingCount(w, en)
	setVersionID(w, en.VersionID)
	if rq.version == "" { // the current version
		g.setExpirationHeader(w, b, rq.key, en)
	}
	if part > 0 {
		setPartChecksum(w, r, en, part)
		w.Header().Set("x-amz-mp-parts-count", strconv.Itoa(partsCount(en)))
	} else {
		setObjectChecksum(w, r, en, ranged)
	}
	q := r.URL.Query()
	for p, h := range responseOverrides {
		if v := q.Get(p); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	status := http.StatusOK
	if ranged {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, en.Size))
		status = http.StatusPartialContent
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return nil
	}
	// Read the first chunk before the status goes out, so that a cluster
	// error is still an S3 error.
	first := min(n, ioChunk)
	var head bytes.Buffer
	if err := g.readData(ctx, &head, en.Extents, off, first); err != nil {
		return err
	}
	w.WriteHeader(status)
	if _, err := w.Write(head.Bytes()); err != nil {
		return nil
	}
	if n > first {
		if err := g.readData(ctx, w, en.Extents, off+first, n-first); err != nil {
			// The status is sent: all we can do is cut the body short.
			g.log.Warn("get object: read failed mid-body", slog.String("request", rq.id), slog.Any("err", err))
			panic(http.ErrAbortHandler)
		}
	}
	return nil
}

func (g *Gateway) deleteObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	b, err := g.bucketFor(ctx, rq, meta.PermWrite, versionAction("s3:DeleteObject", rq.version))
	if err != nil {
		return err
	}
	out, err := g.deleteVersion(ctx, rq, b, rq.key, rq.version)
	if err != nil {
		return err
	}
	out.setHeaders(w)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// removeObject deletes key (absent is not an error): its data go on the
// garbage list, the entry goes, then the data.
func (g *Gateway) removeObject(ctx context.Context, b meta.Bucket, key string) error {
	if len(key) > maxKeyLen {
		return errKeyTooLong
	}
	ix, err := g.meta.Index(ctx, b)
	if err != nil {
		return err
	}
	en, err := ix.Get(ctx, key)
	if errors.Is(err, meta.ErrNoSuchObject) {
		return nil
	}
	if err != nil {
		return err
	}
	var gs []meta.Garbage
	for _, x := range en.Extents {
		gs = append(gs, meta.Garbage{ID: x.ID, Size: x.Size, BucketID: b.ID, Key: key})
	}
	if len(gs) > 0 {
		if err := g.meta.AddGarbage(ctx, gs...); err != nil {
			return err
		}
	}
	if err := ix.Delete(ctx, key); err != nil {
		return err
	}
	if len(en.Extents) > 0 {
		ctx := context.WithoutCancel(ctx)
		g.background(func() { g.discard(ctx, en.Extents...) })
	}
	return nil
}

func (g *Gateway) deleteObjects(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	b, err := g.bucketNamed(ctx, rq.bucket)
	if err != nil {
		return err
	}
	// Without a policy, the bucket's ACL decides for every key at once
	// (a refusal is the request's, as radosgw answers); a policy may
	// decide key by key.
	if o, acl := aclSubject(b, b.Owner, b.ACL); b.Policy == "" && !permitted(o, acl, rq.who(), meta.PermWrite) {
		return errAccessDenied
	}
	want, err := contentMD5(r.Header)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxXMLBody+1))
	if err != nil {
		return err
	}
	if len(body) > maxXMLBody {
		return errMaxMessageLength
	}
	if want != nil {
		if sum := md5.Sum(body); !bytes.Equal(sum[:], want) {
			return errBadDigest
		}
	}
	var req deleteRequest
	if err := decodeXML(bytes.NewReader(body), &req); err != nil {
		return err
	}
	if len(req.Objects) == 0 || len(req.Objects) > 1000 {
		return errMalformedXML.withMessage("A DeleteObjects request names 1 to 1,000 objects; this one names %d.", len(req.Objects))
	}
	res := deleteResult{Xmlns: xmlns}
	for _, o := range req.Objects {
		var err error
		var out deleteOutcome
		switch {
		case o.Key == "":
			err = errInvalidArgument.withMessage("empty key")
		case !g.allow(rq, b, b.Owner, b.ACL, meta.PermWrite, versionAction("s3:DeleteObject", o.VersionID), o.Key):
			err = errAccessDenied
		default:
			out, err = g.deleteVersion(ctx, rq, b, o.Key, o.VersionID)
		}
		if err != nil {
			ae := translate(err)
			res.Errors = append(res.Errors, deleteErrorEntry{Key: o.Key, Code: ae.Code, Message: ae.Message})
			continue
		}
		if !req.Quiet {
			res.Deleted = append(res.Deleted, out.deleted(o.Key))
		}
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

// copySourceEntry finds a copy's source object (the user must have its
// READ) and applies the x-amz-copy-source-if-* conditions.
func (g *Gateway) copySourceEntry(ctx context.Context, r *http.Request, rq *request) (string, string, meta.Entry, error) {
	sb, sk, sv, err := copySource(r.Header.Get("X-Amz-Copy-Source"))
	if err != nil {
		return "", "", meta.Entry{}, err
	}
	src, err := g.bucketNamed(ctx, sb)
	if err != nil {
		return "", "", meta.Entry{}, err
	}
	six, err := g.meta.Index(ctx, src)
	if err != nil {
		return "", "", meta.Entry{}, err
	}
	sen, err := g.objectVersionFor(ctx, rq, src, six, sk, sv, meta.PermRead, "s3:GetObject")
	var dm *deleteMarkerError
	if sv != "" && errors.As(err, &dm) {
		err = errInvalidRequest.withMessage("The source of a copy request may not specifically refer to a delete marker by version id.")
	}
	if err != nil {
		return "", "", meta.Entry{}, err
	}
	cond := http.Header{}
	for _, h := range []string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"} {
		if v := r.Header.Get("X-Amz-Copy-Source-" + h); v != "" {
			cond.Set(h, v)
		}
	}
	if err := checkReadPreconditions(cond, sen); err != nil {
		if err == errNotModified {
			err = errPreconditionFailed
		}
		return "", "", meta.Entry{}, err
	}
	return sb, sk, sen, nil
}

// copySource parses x-amz-copy-source: "[/]bucket/key[?versionId=...]",
// URL-encoded; version is "" without a versionId.
func copySource(v string) (bucket, key, version string, err error) {
	v, query, _ := strings.Cut(v, "?")
	if query != "" {
		version, _ = strings.CutPrefix(query, "versionId=")
		if !meta.ValidVersionID(version) {
			return "", "", "", invalidVersionID(version)
		}
	}
	dec, uerr := url.PathUnescape(v)
	if uerr != nil {
		return "", "", "", errInvalidArgument.withMessage("Invalid copy source encoding.")
	}
	bucket, key, _ = strings.Cut(strings.TrimPrefix(dec, "/"), "/")
	if bucket == "" || key == "" {
		return "", "", "", errInvalidArgument.withMessage("Copy Source must mention the source bucket and key: sourcebucket/sourcekey.")
	}
	return bucket, key, version, nil
}

func (g *Gateway) copyObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	b, err := g.bucketFor(ctx, rq, meta.PermWrite, "s3:PutObject")
	if err != nil {
		return err
	}
	if err := checkWriteACL(b, rq, r.Header); err != nil {
		return err
	}
	acl, err := g.requestACL(ctx, r.Header, rq.newOwner(b), b.Owner)
	if err != nil {
		return err
	}
	sb, sk, sen, err := g.copySourceEntry(ctx, r, rq)
	if err != nil {
		return err
	}
	if sen.Size > maxPutSize {
		return errInvalidRequest.withMessage("The source is larger than 5 GiB: copy it in parts with UploadPartCopy.")
	}
	ck, cks, err := copyChecksum(r.Header, sen.Checksum)
	if err != nil {
		return err
	}
	en := meta.Entry{Size: sen.Size, ETag: sen.ETag, ContentType: sen.ContentType, Meta: sen.Meta, Owner: rq.newOwner(b), ACL: acl, Tags: sen.Tags, Checksum: cks}
	tags, _, err := headerTags(r.Header)
	if err != nil {
		return err
	}
	// Only REPLACE changes the tags (and so makes a copy onto itself
	// legal); with COPY the header's tags are ignored, as S3 does.
	tagged := false
	switch d := r.Header.Get("X-Amz-Tagging-Directive"); d {
	case "", "COPY":
	case "REPLACE":
		en.Tags = tags
		tagged = true
	default:
		return errInvalidArgument.withMessage("Unknown tagging directive %q: COPY or REPLACE.", d)
	}
	switch d := r.Header.Get("X-Amz-Metadata-Directive"); d {
	case "", "COPY":
		if sb == rq.bucket && sk == rq.key && r.Header.Get("X-Amz-Storage-Class") == "" && !tagged && !strings.Contains(r.Header.Get("X-Amz-Copy-Source"), "?versionId=") {
			return errInvalidRequest.withMessage("This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.")
		}
	case "REPLACE":
		m, err := objectMeta(r.Header)
		if err != nil {
			return err
		}
		en.Meta, en.ContentType = m, r.Header.Get("Content-Type")
	default:
		return errInvalidArgument.withMessage("Unknown metadata directive %q: COPY or REPLACE.", d)
	}
	ix, err := g.meta.Index(ctx, b)
	if err != nil {
		return err
	}
	id := meta.NewID()
	if err := g.meta.AddGarbage(ctx, meta.Garbage{ID: id, Size: sen.Size, BucketID: b.ID, Key: rq.key}); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(g.readData(ctx, pw, sen.Extents, 0, sen.Size))
	}()
	n, sum, err := g.writeData(ctx, id, ck.tee(pr), sen.Size, maxPutSize)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		g.discard(ctx, meta.Extent{ID: id, Size: n})
		return err
	}
	if c := ck.computed(); !c.IsZero() {
		en.Checksum = c
	}
	if !strings.Contains(sen.ETag, "-") && hex.EncodeToString(sum) != sen.ETag {
		g.discard(ctx, meta.Extent{ID: id, Size: n})
		return fmt.Errorf("copy %s/%s: the data read back do not match its ETag", sb, sk)
	}
	if strings.Contains(sen.ETag, "-") {
		en.ETag = hex.EncodeToString(sum)
	}
	en.MTime = g.meta.Now()
	if n > 0 {
		en.Extents = []meta.Extent{{ID: id, Size: n}}
	}
	vid, err := g.commitVersion(ctx, b, ix, rq.key, en, []uint64{id}, nil, nil)
	if err != nil {
		return err
	}
	setVersionID(w, vid)
	if sen.VersionID != "" {
		w.Header().Set("x-amz-copy-source-version-id", sen.VersionID)
	}
	writeXML(w, http.StatusOK, copyObjectResult{Xmlns: xmlns, LastModified: s3Time(en.MTime), ETag: quote(en.ETag), checksumFields: xmlChecksum(en.Checksum, true)})
	return nil
}

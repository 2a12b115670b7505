package s3gw

import (
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"strings"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// Bucket versioning, as S3 does it (docs/S3.md, "Versioning"; the index
// layout is meta's versions.go). A bucket never versioned keeps one
// entry per name, read and written as before; once versioning is
// enabled a PUT adds a version with an id, a DELETE without a version id
// adds a delete marker, and one with a version id removes that version
// for good. Suspended, a PUT or DELETE replaces the null version.

// versioningRequest is PutBucketVersioning's body.
type versioningRequest struct {
	XMLName   xml.Name `xml:"VersioningConfiguration"`
	Status    string   `xml:"Status"`
	MfaDelete string   `xml:"MfaDelete"`
}

// keyTooLongForVersions refuses a version of a name too long for one.
func keyTooLongForVersions(key string) error {
	return errKeyTooLong.withMessage("Your key is %d bytes; in a bucket with versioning enabled the limit is %d.", len(key), meta.MaxVersionedName)
}

func invalidVersionID(id string) error {
	return errInvalidArgument.withMessage("Invalid version id specified: %q", id)
}

func (g *Gateway) putBucketVersioning(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutBucketVersioning")
	if err != nil {
		return err
	}
	var c versioningRequest
	if err := decodeXML(r.Body, &c); err != nil {
		return err
	}
	switch c.MfaDelete {
	case "", "Disabled":
	case "Enabled":
		return errNotImplemented.withMessage("MFA delete is not supported")
	default:
		return errMalformedXML.withMessage("MfaDelete %q: Enabled or Disabled.", c.MfaDelete)
	}
	switch c.Status {
	case "":
		// No status: the state stays as it is (S3 does the same).
	case meta.VersioningEnabled, meta.VersioningSuspended:
		if c.Status != b.Versioning {
			if _, err := g.meta.SetBucketVersioning(r.Context(), b, c.Status); err != nil {
				return err
			}
		}
	default:
		return errMalformedXML.withMessage("Versioning Status %q: Enabled or Suspended.", c.Status)
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// deleteMarkerError is a request that met a delete marker: S3 answers
// with the marker's id and x-amz-delete-marker: true.
type deleteMarkerError struct {
	id  string
	err *apiError
}

func (e *deleteMarkerError) Error() string { return e.err.Error() + " (a delete marker)" }
func (e *deleteMarkerError) Unwrap() error { return e.err }

// setDeleteMarkerHeaders adds a delete marker's headers to an answer
// that failed on one.
func setDeleteMarkerHeaders(w http.ResponseWriter, err error) {
	var dm *deleteMarkerError
	if errors.As(err, &dm) {
		w.Header().Set("x-amz-delete-marker", "true")
		w.Header().Set("x-amz-version-id", dm.id)
	}
}

// setVersionID sends a version's id ("" for an object of a bucket never
// versioned: none).
func setVersionID(w http.ResponseWriter, id string) {
	if id != "" {
		w.Header().Set("x-amz-version-id", id)
	}
}

// findVersion returns key's version id ("": the latest) in b: NoSuchKey
// when the latest is a delete marker, MethodNotAllowed when the version
// asked for is one (both with the marker's headers), NoSuchVersion when
// there is no such version.
func (g *Gateway) findVersion(ctx context.Context, b meta.Bucket, ix *meta.Index, key, id string) (meta.Entry, error) {
	switch {
	case id == "" && b.Versioning == "":
		return ix.Get(ctx, key)
	case id == "":
		en, err := ix.Latest(ctx, key)
		if err == nil && en.DeleteMarker {
			return meta.Entry{}, &deleteMarkerError{id: en.VersionID, err: errNoSuchKey}
		}
		return en, err
	}
	en, err := ix.Version(ctx, key, id)
	if errors.Is(err, meta.ErrNoSuchVersion) {
		return meta.Entry{}, errNoSuchVersion
	}
	if err == nil && en.DeleteMarker {
		return meta.Entry{}, &deleteMarkerError{id: id, err: errMethodNotAllowed}
	}
	return en, err
}

// versionActions are the policy actions on a version named by its id,
// by the action on the latest.
var versionActions = map[string]string{
	"s3:GetObject": "s3:GetObjectVersion", "s3:DeleteObject": "s3:DeleteObjectVersion",
	"s3:GetObjectAcl": "s3:GetObjectVersionAcl", "s3:PutObjectAcl": "s3:PutObjectVersionAcl",
	"s3:GetObjectTagging": "s3:GetObjectVersionTagging", "s3:PutObjectTagging": "s3:PutObjectVersionTagging",
	"s3:DeleteObjectTagging": "s3:DeleteObjectVersionTagging",
}

// versionAction is the policy action of a request for action on the
// version id ("": the latest), as S3 names it.
func versionAction(action, id string) string {
	if v, ok := versionActions[action]; ok && id != "" {
		return v
	}
	return action
}

// objectVersionFor is objectFor for version id of key ("": the latest).
// A policy decides on a version named by its id with the action's
// Version form (s3:GetObjectVersion for s3:GetObject, ...).
func (g *Gateway) objectVersionFor(ctx context.Context, rq *request, b meta.Bucket, ix *meta.Index, key, id string, perm meta.Perm, action string) (meta.Entry, error) {
	action = versionAction(action, id)
	en, err := g.findVersion(ctx, b, ix, key, id)
	var dm *deleteMarkerError
	if (errors.Is(err, meta.ErrNoSuchObject) || errors.Is(err, errNoSuchVersion) || errors.As(err, &dm)) &&
		!g.allow(rq, b, b.Owner, b.ACL, meta.PermRead, "s3:ListBucket", "") {
		return meta.Entry{}, errAccessDenied
	}
	if err != nil {
		return meta.Entry{}, err
	}
	owner, acl := objectACL(b, en)
	if !g.allow(rq, b, owner, acl, perm, action, key) {
		return meta.Entry{}, errAccessDenied
	}
	return en, nil
}

// commitVersion makes en key's newest object as b's versioning says,
// and returns the version id to answer ("" in a bucket never versioned
// and, as S3 answers, while suspended): never versioned, commit
// replaces the entry; enabled, a new
// version with an id is added (nothing is replaced: the pending data's
// garbage records are dropped); suspended, commit replaces the null
// version, stamped after the latest. check, a conditional PUT's
// preconditions, is judged against the latest version (a delete marker
// counting as no object).
func (g *Gateway) commitVersion(ctx context.Context, b meta.Bucket, ix *meta.Index, key string, en meta.Entry, pending []uint64, old oldEntry, check func(meta.Stored) error) (string, error) {
	if b.Versioning == "" {
		return "", g.commit(ctx, b, ix, key, en, pending, old, check)
	}
	latest, err := ix.Latest(ctx, key)
	found := err == nil
	if err != nil && !errors.Is(err, meta.ErrNoSuchObject) {
		return "", err
	}
	if check != nil {
		if err := check(meta.Stored{Entry: latest, Live: found && !latest.DeleteMarker}); err != nil {
			g.discardPending(ctx, en, pending)
			return "", err
		}
	}
	if b.Versioning == meta.VersioningSuspended {
		en.Stamp = meta.NextStamp(en.MTime.UnixNano(), latest, found)
		return "", g.commit(ctx, b, ix, key, en, pending, old, nil)
	}
	var after int64
	if found {
		after = latest.VersionStamp()
	}
	v, err := ix.PutVersion(ctx, key, en, after)
	if errors.Is(err, meta.ErrNameTooLong) {
		g.discardPending(ctx, en, pending)
		return "", keyTooLongForVersions(key)
	}
	if err != nil {
		return "", err
	}
	if len(pending) > 0 {
		ctx := context.WithoutCancel(ctx)
		g.background(func() {
			if err := g.meta.DropGarbage(ctx, pending...); err != nil {
				g.log.Warn("commit version: garbage list", "bucket", b.Name, "key", key, "err", err)
			}
		})
	}
	return v.VersionID, nil
}

// deleteOutcome is what a DELETE did: the version it removed or the
// delete marker it added.
type deleteOutcome struct {
	versionID string
	marker    bool // the version removed, or the one added, is a delete marker
	added     bool // a delete marker was added
}

func (o deleteOutcome) setHeaders(w http.ResponseWriter) {
	setVersionID(w, o.versionID)
	if o.marker {
		w.Header().Set("x-amz-delete-marker", "true")
	}
}

// deleted is the outcome as DeleteObjects reports it.
func (o deleteOutcome) deleted(key string) deletedEntry {
	d := deletedEntry{Key: key}
	switch {
	case o.added:
		d.DeleteMarker, d.DeleteMarkerVersionID = true, o.versionID
	case o.marker:
		d.VersionID, d.DeleteMarker, d.DeleteMarkerVersionID = o.versionID, true, o.versionID
	default:
		d.VersionID = o.versionID
	}
	return d
}

// deleteVersion deletes key in b as S3's DeleteObject does: without a
// version id, the object (never versioned), or by a new delete marker
// (enabled), or by a null delete marker in place of the null version
// (suspended); with one, that version for good (one already gone is
// not an error). Removed data go to the garbage list before their entry
// goes, and are removed after.
func (g *Gateway) deleteVersion(ctx context.Context, rq *request, b meta.Bucket, key, id string) (deleteOutcome, error) {
	if len(key) > maxKeyLen {
		return deleteOutcome{}, errKeyTooLong
	}
	if id != "" && !meta.ValidVersionID(id) {
		return deleteOutcome{}, invalidVersionID(id)
	}
	if id == "" && b.Versioning == "" {
		return deleteOutcome{}, g.removeObject(ctx, b, key)
	}
	ix, err := g.meta.Index(ctx, b)
	if err != nil {
		return deleteOutcome{}, err
	}
	if id == "" {
		latest, err := ix.Latest(ctx, key)
		found := err == nil
		if err != nil && !errors.Is(err, meta.ErrNoSuchObject) {
			return deleteOutcome{}, err
		}
		owner := rq.newOwner(b)
		marker := meta.Entry{DeleteMarker: true, MTime: g.meta.Now(), Owner: owner, ACL: meta.Private(owner)}
		if b.Versioning == meta.VersioningSuspended {
			marker.Stamp = meta.NextStamp(marker.MTime.UnixNano(), latest, found)
			if err := g.commit(ctx, b, ix, key, marker, nil, nil, nil); err != nil {
				return deleteOutcome{}, err
			}
			return deleteOutcome{versionID: meta.NullVersion, marker: true, added: true}, nil
		}
		var after int64
		if found {
			after = latest.VersionStamp()
		}
		v, err := ix.PutVersion(ctx, key, marker, after)
		if errors.Is(err, meta.ErrNameTooLong) {
			return deleteOutcome{}, keyTooLongForVersions(key)
		}
		if err != nil {
			return deleteOutcome{}, err
		}
		return deleteOutcome{versionID: v.VersionID, marker: true, added: true}, nil
	}
	for attempt := 0; attempt < commitAttempts; attempt++ {
		st, err := ix.Current(ctx, meta.VersionKey(key, id))
		if err != nil {
			return deleteOutcome{}, err
		}
		if !st.Live {
			return deleteOutcome{versionID: id}, nil
		}
		var gs []meta.Garbage
		for _, x := range st.Entry.Extents {
			gs = append(gs, meta.Garbage{ID: x.ID, Size: x.Size, BucketID: b.ID, Key: key})
		}
		if len(gs) > 0 {
			if err := g.meta.AddGarbage(ctx, gs...); err != nil {
				return deleteOutcome{}, err
			}
		}
		err = ix.RemoveVersion(ctx, key, id, st)
		if errors.Is(err, meta.ErrConflict) {
			continue // its ACL or tags changed meanwhile: read it again
		}
		if err != nil {
			return deleteOutcome{}, err
		}
		if xs := st.Entry.Extents; len(xs) > 0 {
			ctx := context.WithoutCancel(ctx)
			g.background(func() { g.discard(ctx, xs...) })
		}
		return deleteOutcome{versionID: id, marker: st.Entry.DeleteMarker}, nil
	}
	return deleteOutcome{}, errSlowDown
}

// versionItem is one entry of a version listing.
type versionItem struct {
	key    string
	en     meta.Entry
	latest bool
}

// versionPage is one page of ListObjectVersions.
type versionPage struct {
	items       []versionItem
	prefixes    []string
	truncated   bool
	nextKey     string
	nextVersion string
}

// listVersions pages through the versions of the names with prefix in
// name order, each name's newest first, after the version versionMarker
// of keyMarker (or after all of keyMarker's without one), rolled up to
// common prefixes at the first delimiter after the prefix.
func listVersions(ctx context.Context, ix *meta.Index, prefix, delimiter, keyMarker, versionMarker string, limit int) (versionPage, error) {
	var p versionPage
	start := prefix
	if keyMarker != "" {
		from := keyMarker
		if versionMarker == "" {
			from = keyMarker + "\x01" // after every version of keyMarker
		}
		// A marker inside a common prefix resumes after the prefix.
		if delimiter != "" && strings.HasPrefix(keyMarker, prefix) {
			if i := strings.Index(keyMarker[len(prefix):], delimiter); i >= 0 {
				if from = prefixEnd(keyMarker[:len(prefix)+i+len(delimiter)]); from == "" {
					return p, nil
				}
			}
		}
		start = max(start, from)
	}
	if limit == 0 {
		return p, nil
	}
	n, lastPrefix := 0, ""
	err := ix.Scan(ctx, start, prefixEnd(prefix), func(name string, vs []meta.Entry) bool {
		if name < start {
			return false
		}
		if delimiter != "" {
			if i := strings.Index(name[len(prefix):], delimiter); i >= 0 {
				cp := name[:len(prefix)+i+len(delimiter)]
				if cp == lastPrefix {
					return false
				}
				if n == limit {
					p.truncated = true
					return true
				}
				p.prefixes = append(p.prefixes, cp)
				lastPrefix, p.nextKey, p.nextVersion = cp, cp, ""
				n++
				return false
			}
		}
		skipping := name == keyMarker && versionMarker != ""
		for i, v := range vs {
			if skipping {
				// Skip through the marker; a marker version since
				// removed ends the skip at the first older version.
				if v.VersionID == versionMarker {
					skipping = false
					continue
				}
				if versionMarker == meta.NullVersion || v.VersionStamp() >= meta.VersionIDStamp(versionMarker) {
					continue
				}
				skipping = false
			}
			if n == limit {
				p.truncated = true
				return true
			}
			p.items = append(p.items, versionItem{key: name, en: v, latest: i == 0})
			p.nextKey, p.nextVersion = name, v.VersionID
			n++
		}
		return false
	})
	return p, err
}

// listObjectVersions answers ListObjectVersions.
func (g *Gateway) listObjectVersions(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, ix, q, n, enc, err := g.listSetup(r, rq, "s3:ListBucketVersions")
	if err != nil {
		return err
	}
	prefix, delim, km, vm := q.Get("prefix"), q.Get("delimiter"), q.Get("key-marker"), q.Get("version-id-marker")
	if vm != "" && km == "" {
		return errInvalidArgument.withMessage("A version-id marker cannot be specified without a key marker.")
	}
	if vm != "" && !meta.ValidVersionID(vm) {
		return invalidVersionID(vm)
	}
	p, err := listVersions(r.Context(), ix, prefix, delim, km, vm, n)
	if err != nil {
		return err
	}
	res := listVersionsResult{Xmlns: xmlns, Name: rq.bucket, Prefix: encodeKey(prefix, enc), KeyMarker: encodeKey(km, enc), VersionIDMarker: vm,
		MaxKeys: n, Delimiter: encodeKey(delim, enc), IsTruncated: p.truncated}
	if enc {
		res.EncodingType = "url"
	}
	if p.truncated {
		res.NextKeyMarker, res.NextVersionIDMarker = encodeKey(p.nextKey, enc), p.nextVersion
	}
	os := g.owners(r.Context(), rq.user)
	for _, it := range p.items {
		oo, _ := objectACL(b, it.en)
		id := it.en.VersionID
		e := versionEntry{Key: encodeKey(it.key, enc), VersionID: id, IsLatest: it.latest, LastModified: s3Time(it.en.MTime), Owner: os.of(oo)}
		if it.en.DeleteMarker {
			e.XMLName.Local = "DeleteMarker"
		} else {
			e.XMLName.Local = "Version"
			size := it.en.Size
			e.ETag, e.Size, e.StorageClass = quote(it.en.ETag), &size, "STANDARD"
			if v := it.en.Meta["x-amz-storage-class"]; v != "" {
				e.StorageClass = v
			}
		}
		res.Versions = append(res.Versions, e)
	}
	for _, cp := range p.prefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: encodeKey(cp, enc)})
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

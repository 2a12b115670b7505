package s3gw

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// Multipart limits (S3's).
const (
	minPartSize = 5 << 20
	maxPartNum  = 10000
)

func (g *Gateway) createMultipartUpload(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	b, err := g.bucketFor(ctx, rq, meta.PermWrite, "s3:PutObject")
	if err != nil {
		return err
	}
	m, err := objectMeta(r.Header)
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
	tags, _, err := headerTags(r.Header)
	if err != nil {
		return err
	}
	cks, err := uploadChecksum(r.Header)
	if err != nil {
		return err
	}
	u, err := g.meta.CreateUpload(ctx, b, meta.Upload{Key: rq.key, ContentType: r.Header.Get("Content-Type"), Meta: m, Owner: rq.newOwner(b), ACL: acl, Tags: tags, Checksum: cks})
	if err != nil {
		return err
	}
	if !cks.IsZero() {
		w.Header().Set("x-amz-checksum-algorithm", cks.Algorithm)
		w.Header().Set("x-amz-checksum-type", cks.Type)
	}
	writeXML(w, http.StatusOK, initiateMultipartUploadResult{Xmlns: xmlns, Bucket: b.Name, Key: rq.key, UploadID: u.ID})
	return nil
}

func partNumber(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPartNum {
		return 0, errInvalidArgument.withMessage("Part number must be an integer between 1 and 10000, inclusive (got %q).", v)
	}
	return n, nil
}

// upload finds the request's upload, in a bucket the user may write.
func (g *Gateway) upload(r *http.Request, rq *request, action string) (meta.Bucket, meta.Upload, error) {
	b, err := g.bucketFor(r.Context(), rq, meta.PermWrite, action)
	if err != nil {
		return b, meta.Upload{}, err
	}
	id := r.URL.Query().Get("uploadId")
	if id == "" || len(id) > 64 || strings.ContainsAny(id, "/\x00") {
		return b, meta.Upload{}, errNoSuchUpload
	}
	u, err := g.meta.GetUpload(r.Context(), b, rq.key, id)
	return b, u, err
}

func (g *Gateway) uploadPart(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	num, err := partNumber(r.URL.Query().Get("partNumber"))
	if err != nil {
		return err
	}
	b, u, err := g.upload(r, rq, "s3:PutObject")
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
	if err := ck.ensure(u.Checksum.Algorithm); err != nil {
		return err
	}
	id := meta.NewID()
	if err := g.meta.AddGarbage(ctx, meta.Garbage{ID: id, Size: size, BucketID: b.ID, Key: u.Key, UploadID: u.ID}); err != nil {
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
	cks.Type = "" // a part's checksum is of its bytes
	p, err := g.recordPart(ctx, b, u, meta.Part{Number: num, ETag: hex.EncodeToString(sum), Size: n, ID: id, Checksum: cks}, "upload part")
	if err != nil {
		return err
	}
	w.Header().Set("ETag", quote(p.ETag))
	setChecksumHeader(w, cks)
	w.WriteHeader(http.StatusOK)
	return nil
}

// recordPart puts part p, whose data is written, in upload u's list:
// its data leaves the garbage list, and the data of a part it replaces
// goes on it and is removed. If the list refuses it, its own data is
// removed. op names the request in logs.
func (g *Gateway) recordPart(ctx context.Context, b meta.Bucket, u meta.Upload, p meta.Part, op string) (meta.Part, error) {
	p.MTime = g.meta.Now()
	old, replaced, err := g.meta.PutPart(ctx, u.ID, p)
	if err != nil {
		g.discard(ctx, meta.Extent{ID: p.ID, Size: p.Size})
		return p, err
	}
	if err := g.meta.DropGarbage(ctx, p.ID); err != nil {
		g.log.Warn(op+": garbage list", "err", err)
	}
	if replaced {
		if err := g.meta.AddGarbage(ctx, meta.Garbage{ID: old.ID, Size: old.Size, BucketID: b.ID, Key: u.Key, UploadID: u.ID}); err == nil {
			g.discard(ctx, meta.Extent{ID: old.ID, Size: old.Size})
		}
	}
	return p, nil
}

func (g *Gateway) listParts(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, u, err := g.upload(r, rq, "s3:ListMultipartUploadParts")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	after := 0
	if v := q.Get("part-number-marker"); v != "" {
		if after, err = strconv.Atoi(v); err != nil || after < 0 {
			return errInvalidArgument.withMessage("part-number-marker %q: give an integer", v)
		}
	}
	max := 1000
	if v := q.Get("max-parts"); v != "" {
		if max, err = strconv.Atoi(v); err != nil || max < 0 {
			return errInvalidArgument.withMessage("max-parts %q: give an integer from 0 to 1000", v)
		}
		max = min(max, 1000)
	}
	ps, more, err := g.meta.ListParts(r.Context(), u.ID, after, max)
	if err != nil {
		return err
	}
	uo, _ := uploadOwner(b, u)
	os := g.owners(r.Context(), rq.user)
	res := listPartsResult{Xmlns: xmlns, Bucket: b.Name, Key: u.Key, UploadID: u.ID, Initiator: os.of(uo), Owner: os.of(uo),
		StorageClass: "STANDARD", PartNumberMarker: after, MaxParts: max, IsTruncated: more, Parts: []partEntry{},
		ChecksumAlgorithm: u.Checksum.Algorithm, ChecksumType: u.Checksum.Type}
	for _, p := range ps {
		res.Parts = append(res.Parts, partEntry{PartNumber: p.Number, LastModified: s3Time(p.MTime), ETag: quote(p.ETag), Size: p.Size,
			checksumFields: xmlChecksum(p.Checksum, false)})
		res.NextPartNumberMarker = p.Number
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

func (g *Gateway) completeMultipartUpload(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	b, u, err := g.upload(r, rq, "s3:PutObject")
	if err != nil {
		return err
	}
	var req completeMultipartUpload
	if err := decodeXML(r.Body, &req); err != nil {
		return err
	}
	if len(req.Parts) == 0 {
		return errMalformedXML.withMessage("The XML you provided names no part.")
	}
	if len(req.Parts) > meta.MaxParts {
		return errInvalidRequest.withMessage("This gateway completes uploads of at most %d parts (this one has %d).", meta.MaxParts, len(req.Parts))
	}
	all, err := g.meta.AllParts(ctx, u.ID)
	if err != nil {
		return err
	}
	byNum := make(map[int]meta.Part, len(all))
	for _, p := range all {
		byNum[p.Number] = p
	}
	h := md5.New()
	en := meta.Entry{MTime: g.meta.Now(), ContentType: u.ContentType, Meta: u.Meta, Owner: u.Owner, ACL: u.ACL, Tags: u.Tags}
	used := map[uint64]bool{}
	var done []meta.Part // in the order completed
	prev := 0
	for _, rp := range req.Parts {
		if rp.PartNumber <= prev {
			return errInvalidPartOrder
		}
		prev = rp.PartNumber
	}
	for i, rp := range req.Parts {
		p, ok := byNum[rp.PartNumber]
		if !ok || strings.Trim(rp.ETag, `" `) != p.ETag {
			return errInvalidPart.withMessage("Part %d was not uploaded, or its ETag is not %s.", rp.PartNumber, rp.ETag)
		}
		if i < len(req.Parts)-1 && p.Size < minPartSize {
			return errEntityTooSmall.withMessage("Part %d is %d bytes; every part but the last must be at least 5 MiB.", p.Number, p.Size)
		}
		if err := checkCompletedPart(u.Checksum, p, rp.partChecksum); err != nil {
			return err
		}
		done = append(done, p)
		sum, _ := hex.DecodeString(p.ETag)
		h.Write(sum)
		en.Size += p.Size
		if p.Size > 0 {
			en.Extents = append(en.Extents, meta.Extent{ID: p.ID, Size: p.Size})
		}
		used[p.ID] = true
	}
	if en.Size > maxObjectSize {
		return errEntityTooLarge
	}
	en.ETag = fmt.Sprintf("%s-%d", hex.EncodeToString(h.Sum(nil)), len(req.Parts))
	if err := completedChecksum(r.Header, u.Checksum, done, &en); err != nil {
		return err
	}
	var unused []meta.Extent
	var gs []meta.Garbage
	for _, p := range all {
		if !used[p.ID] {
			unused = append(unused, meta.Extent{ID: p.ID, Size: p.Size})
			gs = append(gs, meta.Garbage{ID: p.ID, Size: p.Size, BucketID: b.ID, Key: u.Key, UploadID: u.ID})
		}
	}
	if len(gs) > 0 {
		if err := g.meta.AddGarbage(ctx, gs...); err != nil {
			return err
		}
	}
	ix, err := g.meta.Index(ctx, b)
	if err != nil {
		return err
	}
	vid, err := g.commitVersion(ctx, b, ix, u.Key, en, nil, nil, nil)
	if err != nil {
		return err
	}
	setVersionID(w, vid)
	if err := g.meta.FinishUpload(ctx, b, u.Key, u.ID); err != nil {
		g.log.Warn("complete upload: forget it", "upload", u.ID, "err", err)
	}
	if len(unused) > 0 {
		g.discard(ctx, unused...)
	}
	writeXML(w, http.StatusOK, completeMultipartUploadResult{Xmlns: xmlns, Location: "/" + b.Name + "/" + u.Key, Bucket: b.Name, Key: u.Key, ETag: quote(en.ETag),
		checksumFields: xmlChecksum(en.Checksum, true)})
	return nil
}

func (g *Gateway) abortMultipartUpload(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, u, err := g.upload(r, rq, "s3:AbortMultipartUpload")
	if err != nil {
		return err
	}
	if err := g.abortUpload(r.Context(), b, u); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// abortUpload forgets upload u of bucket b and removes its parts' data
// (AbortMultipartUpload, and the lifecycle's AbortIncompleteMultipartUpload).
func (g *Gateway) abortUpload(ctx context.Context, b meta.Bucket, u meta.Upload) error {
	parts, err := g.meta.AllParts(ctx, u.ID)
	if err != nil {
		return err
	}
	// A complete that stopped after its index write left the upload
	// listed: its parts that an entry names are the object's now — in
	// a versioned bucket a version's, under its own key, so every
	// version of the name is looked at.
	inUse := map[uint64]bool{}
	ix, err := g.meta.Index(ctx, b)
	if err != nil {
		return err
	}
	vs, err := ix.Versions(ctx, u.Key)
	if err != nil {
		return err
	}
	for _, en := range vs {
		for _, x := range en.Extents {
			inUse[x.ID] = true
		}
	}
	var drop []meta.Extent
	var gs []meta.Garbage
	for _, p := range parts {
		if !inUse[p.ID] {
			drop = append(drop, meta.Extent{ID: p.ID, Size: p.Size})
			gs = append(gs, meta.Garbage{ID: p.ID, Size: p.Size, BucketID: b.ID, Key: u.Key, UploadID: u.ID})
		}
	}
	if len(gs) > 0 {
		if err := g.meta.AddGarbage(ctx, gs...); err != nil {
			return err
		}
	}
	if err := g.meta.FinishUpload(ctx, b, u.Key, u.ID); err != nil {
		return err
	}
	if len(drop) > 0 {
		g.discard(ctx, drop...)
	}
	return nil
}

func (g *Gateway) listMultipartUploads(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.bucketFor(r.Context(), rq, meta.PermRead, "s3:ListBucketMultipartUploads")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	max := 1000
	if v := q.Get("max-uploads"); v != "" {
		if max, err = strconv.Atoi(v); err != nil || max < 0 {
			return errInvalidArgument.withMessage("max-uploads %q: give an integer from 0 to 1000", v)
		}
		max = min(max, 1000)
	}
	prefix, km, um := q.Get("prefix"), q.Get("key-marker"), q.Get("upload-id-marker")
	after := ""
	if km != "" {
		after = meta.UploadMarker(km, um)
	}
	res := listMultipartUploadsResult{Xmlns: xmlns, Bucket: b.Name, KeyMarker: km, UploadIDMarker: um, Prefix: prefix, MaxUploads: max}
	if max > 0 {
		ups, more, err := g.meta.ListUploads(r.Context(), b, prefix, after, max)
		if err != nil {
			return err
		}
		res.IsTruncated = more
		os := g.owners(r.Context(), rq.user)
		for _, u := range ups {
			uo, _ := uploadOwner(b, u)
			res.Uploads = append(res.Uploads, uploadEntry{Key: u.Key, UploadID: u.ID, Initiator: os.of(uo), Owner: os.of(uo), StorageClass: "STANDARD", Initiated: s3Time(u.Initiated)})
			res.NextKeyMarker, res.NextUploadIDMarker = u.Key, u.ID
		}
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

// uploadPartCopy is UploadPartCopy: a part copied from an object, or
// from the bytes x-amz-copy-source-range names.
func (g *Gateway) uploadPartCopy(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	num, err := partNumber(r.URL.Query().Get("partNumber"))
	if err != nil {
		return err
	}
	b, u, err := g.upload(r, rq, "s3:PutObject")
	if err != nil {
		return err
	}
	_, _, sen, err := g.copySourceEntry(ctx, r, rq)
	if err != nil {
		return err
	}
	off, n := int64(0), sen.Size
	if v := r.Header.Get("X-Amz-Copy-Source-Range"); v != "" {
		var first, last int64
		if k, serr := fmt.Sscanf(v, "bytes=%d-%d", &first, &last); serr != nil || k != 2 || first < 0 || last < first || last >= sen.Size ||
			v != fmt.Sprintf("bytes=%d-%d", first, last) {
			return errInvalidArgument.withMessage("The x-amz-copy-source-range %q must be bytes=first-last within the source's %d bytes.", v, sen.Size)
		}
		off, n = first, last-first+1
	}
	if n > maxPutSize {
		return errEntityTooLarge
	}
	id := meta.NewID()
	if err := g.meta.AddGarbage(ctx, meta.Garbage{ID: id, Size: n, BucketID: b.ID, Key: u.Key, UploadID: u.ID}); err != nil {
		return err
	}
	ck := &bodyChecksum{}
	_ = ck.ensure(u.Checksum.Algorithm) // computes the upload's algorithm, if any
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(g.readData(ctx, pw, sen.Extents, off, n)) }()
	got, sum, err := g.writeData(ctx, id, ck.tee(pr), n, maxPutSize)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		g.discard(ctx, meta.Extent{ID: id, Size: got})
		return err
	}
	cks := ck.computed()
	cks.Type = ""
	p, err := g.recordPart(ctx, b, u, meta.Part{Number: num, ETag: hex.EncodeToString(sum), Size: got, ID: id, Checksum: cks}, "upload part copy")
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, copyPartResult{Xmlns: xmlns, LastModified: s3Time(p.MTime), ETag: quote(p.ETag), checksumFields: xmlChecksum(cks, false)})
	return nil
}

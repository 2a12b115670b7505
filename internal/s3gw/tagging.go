package s3gw

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// Tagging as S3 does it (the S3 API reference: PutObjectTagging,
// PutBucketTagging; the user guide's "Categorizing your storage using
// tags"): a tag set of at most 10 tags on an object and 50 on a bucket,
// keys of 1 to 128 Unicode characters, values of up to 256, keys unique.
// An object's tags live in its index entry, a bucket's in its record.
//
// Who may: an object's tags are read by whoever may read the object
// (READ) and replaced or removed by whoever may change its ACL
// (WRITE_ACP: its owner, or a FULL_CONTROL or WRITE_ACP grantee) — tags
// are the object's metadata, not its data, so the bucket's WRITE does
// not reach them. A bucket's tags are its owner's. A bucket policy may
// allow or deny s3:GetObjectTagging, s3:PutObjectTagging,
// s3:DeleteObjectTagging, s3:GetBucketTagging and s3:PutBucketTagging
// (S3 has no s3:DeleteBucketTagging: PutBucketTagging covers it).

// Tag limits.
const (
	maxObjectTags = 10
	maxBucketTags = 50
	maxTagKey     = 128 // Unicode characters
	maxTagValue   = 256
)

var (
	errInvalidTag   = &apiError{"InvalidTag", 400, "The tag provided was not a valid tag."}
	errNoSuchTagSet = &apiError{"NoSuchTagSet", 404, "The TagSet does not exist"}
)

// taggingXML is the Tagging document of GetObjectTagging and
// GetBucketTagging, and the body of their Put.
type taggingXML struct {
	XMLName xml.Name `xml:"Tagging"`
	Xmlns   string   `xml:"xmlns,attr,omitempty"`
	TagSet  *tagSet  `xml:"TagSet"`
}

type tagSet struct {
	Tags []tagXML `xml:"Tag"`
}

type tagXML struct {
	Key   *string `xml:"Key"`
	Value *string `xml:"Value"`
}

// checkTags applies S3's limits to a tag set of at most max tags.
func checkTags(tags []meta.Tag, max int) error {
	if len(tags) > max {
		return errInvalidTag.withMessage("Object tags cannot be greater than %d", max)
	}
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		if !utf8.ValidString(t.Key) || !utf8.ValidString(t.Value) {
			return errInvalidTag.withMessage("The TagKey or TagValue you have provided is not valid UTF-8.")
		}
		if n := utf8.RuneCountInString(t.Key); n == 0 || n > maxTagKey {
			return errInvalidTag.withMessage("The TagKey you have provided is invalid: it must be 1 to %d characters (%d given).", maxTagKey, n)
		}
		if n := utf8.RuneCountInString(t.Value); n > maxTagValue {
			return errInvalidTag.withMessage("The TagValue you have provided is too long: at most %d characters (%d given).", maxTagValue, n)
		}
		if seen[t.Key] {
			return errInvalidTag.withMessage("Cannot provide multiple Tags with the same key: %q.", t.Key)
		}
		seen[t.Key] = true
	}
	return nil
}

// headerTags parses x-amz-tagging: URL query encoded "k1=v1&k2=v2", in
// order (set is false when the header is absent).
func headerTags(h http.Header) (tags []meta.Tag, set bool, err error) {
	v, ok := h["X-Amz-Tagging"]
	if !ok {
		return nil, false, nil
	}
	s := strings.Join(v, "&")
	for _, pair := range strings.Split(s, "&") {
		if pair == "" {
			continue
		}
		k, val, _ := strings.Cut(pair, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(val)
		if err1 != nil || err2 != nil {
			return nil, false, errInvalidArgument.withMessage("The x-amz-tagging header is not URL query encoded: %q.", pair)
		}
		tags = append(tags, meta.Tag{Key: dk, Value: dv})
	}
	if err := checkTags(tags, maxObjectTags); err != nil {
		return nil, false, err
	}
	return tags, true, nil
}

// parseTagging reads a Put*Tagging body of at most max tags.
func parseTagging(r *http.Request, max int) ([]meta.Tag, error) {
	var doc taggingXML
	if err := decodeXML(r.Body, &doc); err != nil {
		return nil, err
	}
	if doc.TagSet == nil {
		return nil, errMalformedXML.withMessage("The Tagging document has no TagSet.")
	}
	tags := make([]meta.Tag, 0, len(doc.TagSet.Tags))
	for _, t := range doc.TagSet.Tags {
		if t.Key == nil || t.Value == nil {
			return nil, errMalformedXML.withMessage("A Tag needs a Key and a Value.")
		}
		tags = append(tags, meta.Tag{Key: *t.Key, Value: *t.Value})
	}
	if err := checkTags(tags, max); err != nil {
		return nil, err
	}
	if len(tags) == 0 {
		return nil, nil
	}
	return tags, nil
}

func writeTagging(w http.ResponseWriter, tags []meta.Tag) {
	doc := taggingXML{Xmlns: xmlns, TagSet: &tagSet{Tags: []tagXML{}}}
	for _, t := range tags {
		doc.TagSet.Tags = append(doc.TagSet.Tags, tagXML{Key: &t.Key, Value: &t.Value})
	}
	writeXML(w, http.StatusOK, doc)
}

// setTaggingCount sends x-amz-tagging-count on GET and HEAD of an object
// with tags.
func setTaggingCount(w http.ResponseWriter, en meta.Entry) {
	if len(en.Tags) > 0 {
		w.Header().Set("x-amz-tagging-count", strconv.Itoa(len(en.Tags)))
	}
}

func (g *Gateway) getObjectTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	_, _, en, err := g.requestObject(ctx, rq, meta.PermRead, "s3:GetObjectTagging")
	if err != nil {
		return err
	}
	writeTagging(w, en.Tags)
	return nil
}

// setObjectTags replaces an object's tags (nil removes them) in its
// index entry, swapped in only over the entry it read (meta.Index.Swap):
// if the object changed meanwhile the client is told SlowDown and
// retries, so an overwrite is never undone.
func (g *Gateway) setObjectTags(r *http.Request, rq *request, action string, body bool) error {
	ctx := r.Context()
	b, ix, en, err := g.requestObject(ctx, rq, meta.PermWriteACP, action)
	if err != nil {
		return err
	}
	var tags []meta.Tag
	if body {
		if tags, err = parseTagging(r, maxObjectTags); err != nil {
			return err
		}
	}
	if g.tagRaceHook != nil {
		g.tagRaceHook(false)
	}
	slot := meta.VersionKey(rq.key, en.VersionID)
	cur, err := ix.Current(ctx, slot)
	if err != nil {
		return err
	}
	if !cur.Live || string(cur.Entry.Encode()) != string(en.Encode()) {
		return fmt.Errorf("set object tags %s/%s: %w", b.Name, rq.key, meta.ErrConflict)
	}
	next := cur.Entry
	next.Tags = tags
	if g.tagRaceHook != nil {
		g.tagRaceHook(true)
	}
	return ix.Swap(ctx, slot, cur, next)
}

func (g *Gateway) putObjectTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := g.setObjectTags(r, rq, "s3:PutObjectTagging", true); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *Gateway) deleteObjectTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := g.setObjectTags(r, rq, "s3:DeleteObjectTagging", false); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (g *Gateway) getBucketTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:GetBucketTagging")
	if err != nil {
		return err
	}
	if len(b.Tags) == 0 {
		return errNoSuchTagSet
	}
	writeTagging(w, b.Tags)
	return nil
}

func (g *Gateway) putBucketTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutBucketTagging")
	if err != nil {
		return err
	}
	tags, err := parseTagging(r, maxBucketTags)
	if err != nil {
		return err
	}
	if _, err := g.meta.SetBucketTags(r.Context(), b, tags); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (g *Gateway) deleteBucketTagging(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutBucketTagging")
	if err != nil {
		return err
	}
	if len(b.Tags) > 0 {
		if _, err := g.meta.SetBucketTags(r.Context(), b, nil); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

package s3gw

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// listPage is one page of a listing: objects and common prefixes in key
// order, at most max of them together.
type listPage struct {
	objects   []meta.Listed
	prefixes  []string
	truncated bool
	next      string // where the next page starts (a key, inclusive)
	last      string // the last key or prefix returned
}

// prefixEnd is the first string after every string that begins with p
// ("" when there is none: p is all 0xff bytes or empty).
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// listObjects pages through the index from start (inclusive): keys with
// prefix, rolled up to common prefixes at the first delimiter after the
// prefix.
func (g *Gateway) listObjects(ctx context.Context, ix *meta.Index, prefix, delimiter, start string, max int) (listPage, error) {
	var p listPage
	if start < prefix {
		start = prefix
	}
	// A start inside a common prefix (a marker that is one, or a key
	// under one) resumes after the whole prefix, which was returned.
	if delimiter != "" && strings.HasPrefix(start, prefix) {
		if i := strings.Index(start[len(prefix):], delimiter); i >= 0 {
			cp := start[:len(prefix)+i+len(delimiter)]
			if start != cp {
				start = prefixEnd(cp)
				if start == "" {
					return p, nil
				}
			}
		}
	}
	end := prefixEnd(prefix)
	if max == 0 {
		return p, nil
	}
outer:
	for {
		batch := max - len(p.objects) - len(p.prefixes) + 1
		got, more, err := ix.ListLatest(ctx, start, end, min(batch, 1000))
		if err != nil {
			return p, err
		}
		for _, o := range got {
			if delimiter != "" {
				if i := strings.Index(o.Key[len(prefix):], delimiter); i >= 0 {
					cp := o.Key[:len(prefix)+i+len(delimiter)]
					if len(p.objects)+len(p.prefixes) == max {
						p.truncated = true
						return p, nil
					}
					p.prefixes = append(p.prefixes, cp)
					p.last = cp
					start = prefixEnd(cp)
					p.next = start
					if start == "" {
						return p, nil
					}
					continue outer
				}
			}
			if len(p.objects)+len(p.prefixes) == max {
				p.truncated = true
				return p, nil
			}
			p.objects = append(p.objects, o)
			p.last = o.Key
			start = o.Key + "\x00"
			p.next = start
		}
		if !more || len(got) == 0 {
			return p, nil
		}
	}
}

func maxKeys(q url.Values) (int, error) {
	v := q.Get("max-keys")
	if v == "" {
		return 1000, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errInvalidArgument.withMessage("max-keys %q: give an integer from 0 to 1000", v)
	}
	return min(n, 1000), nil
}

// encodeKey applies encoding-type=url.
func encodeKey(s string, enc bool) string {
	if !enc {
		return s
	}
	return strings.ReplaceAll(url.QueryEscape(s), "%2F", "/")
}

func (g *Gateway) listSetup(r *http.Request, rq *request, action string) (meta.Bucket, *meta.Index, url.Values, int, bool, error) {
	b, err := g.bucketFor(r.Context(), rq, meta.PermRead, action)
	if err != nil {
		return b, nil, nil, 0, false, err
	}
	q := r.URL.Query()
	n, err := maxKeys(q)
	if err != nil {
		return b, nil, nil, 0, false, err
	}
	enc := false
	switch e := q.Get("encoding-type"); e {
	case "":
	case "url":
		enc = true
	default:
		return b, nil, nil, 0, false, errInvalidArgument.withMessage("Invalid Encoding Method specified in Request: %q (only url)", e)
	}
	ix, err := g.meta.Index(r.Context(), b)
	return b, ix, q, n, enc, err
}

func (g *Gateway) fillContents(ctx context.Context, res *listBucketResult, p listPage, enc, withOwner bool, b meta.Bucket, me meta.User) {
	os := g.owners(ctx, me)
	res.Contents = make([]objectEntry, 0, len(p.objects))
	for _, o := range p.objects {
		e := objectEntry{Key: encodeKey(o.Key, enc), LastModified: s3Time(o.Entry.MTime), ETag: quote(o.Entry.ETag), Size: o.Entry.Size, StorageClass: "STANDARD"}
		if sc := o.Entry.Meta["x-amz-storage-class"]; sc != "" {
			e.StorageClass = sc
		}
		e.ChecksumAlgorithm, e.ChecksumType = o.Entry.Checksum.Algorithm, o.Entry.Checksum.Type
		if withOwner {
			name, _ := objectACL(b, o.Entry)
			ow := os.of(name)
			e.Owner = &ow
		}
		res.Contents = append(res.Contents, e)
	}
	for _, cp := range p.prefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: encodeKey(cp, enc)})
	}
}

func (g *Gateway) listObjectsV1(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, ix, q, n, enc, err := g.listSetup(r, rq, "s3:ListBucket")
	if err != nil {
		return err
	}
	prefix, delim, marker := q.Get("prefix"), q.Get("delimiter"), q.Get("marker")
	start := ""
	if marker != "" {
		start = marker + "\x00"
	}
	p, err := g.listObjects(r.Context(), ix, prefix, delim, start, n)
	if err != nil {
		return err
	}
	res := listBucketResult{Xmlns: xmlns, Name: rq.bucket, Prefix: encodeKey(prefix, enc), Marker: &marker, MaxKeys: n,
		Delimiter: encodeKey(delim, enc), IsTruncated: p.truncated}
	if enc {
		res.EncodingType = "url"
		m := encodeKey(marker, enc)
		res.Marker = &m
	}
	if p.truncated && delim != "" {
		res.NextMarker = encodeKey(p.last, enc)
	}
	g.fillContents(r.Context(), &res, p, enc, true, b, rq.user)
	writeXML(w, http.StatusOK, res)
	return nil
}

func (g *Gateway) listObjectsV2(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, ix, q, n, enc, err := g.listSetup(r, rq, "s3:ListBucket")
	if err != nil {
		return err
	}
	prefix, delim, after := q.Get("prefix"), q.Get("delimiter"), q.Get("start-after")
	start := ""
	if after != "" {
		start = after + "\x00"
	}
	token, hasToken := q["continuation-token"]
	if hasToken {
		raw, err := base64.RawURLEncoding.DecodeString(token[0])
		if err != nil || len(token[0]) == 0 {
			return errInvalidArgument.withMessage("The continuation token provided is incorrect")
		}
		start = string(raw)
	}
	p, err := g.listObjects(r.Context(), ix, prefix, delim, start, n)
	if err != nil {
		return err
	}
	count := len(p.objects) + len(p.prefixes)
	res := listBucketResult{Xmlns: xmlns, Name: rq.bucket, Prefix: encodeKey(prefix, enc), MaxKeys: n, KeyCount: &count,
		Delimiter: encodeKey(delim, enc), IsTruncated: p.truncated, StartAfter: encodeKey(after, enc)}
	if hasToken {
		res.ContinuationToken = token[0]
	}
	if enc {
		res.EncodingType = "url"
	}
	if p.truncated {
		res.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(p.next))
	}
	g.fillContents(r.Context(), &res, p, enc, q.Get("fetch-owner") == "true", b, rq.user)
	writeXML(w, http.StatusOK, res)
	return nil
}

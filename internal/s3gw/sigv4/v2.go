package sigv4

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Signature Version 2, for old clients (the S3 developer guide's
// "Signing and authenticating REST requests"): HMAC-SHA1 of the method,
// Content-MD5, Content-Type, the date (or a presigned URL's Expires), the
// x-amz-* headers and the canonical resource.

// v2SubResources are the query parameters the canonical resource keeps.
var v2SubResources = map[string]bool{
	"acl": true, "cors": true, "delete": true, "lifecycle": true, "location": true, "logging": true,
	"notification": true, "partNumber": true, "policy": true, "requestPayment": true, "tagging": true,
	"torrent": true, "uploadId": true, "uploads": true, "versionId": true, "versioning": true,
	"versions": true, "website": true, "response-content-type": true, "response-content-language": true,
	"response-expires": true, "response-cache-control": true, "response-content-disposition": true,
	"response-content-encoding": true,
}

// WithHostBucket tells the verifier how to find the bucket a
// virtual-host-style request names by its host (V2 signs "/bucket/key"
// either way).
func WithHostBucket(f func(*http.Request) string) Option {
	return func(v *Verifier) { v.hostBucket = f }
}

// Option configures a Verifier.
type Option func(*Verifier)

// verifyV2 checks a V2 signature from the header ("AWS AK:sig") or the
// query (AWSAccessKeyId, Signature, Expires).
func (v *Verifier) verifyV2(ctx context.Context, r *http.Request, header string) (Result, error) {
	res := Result{DecodedLength: -1, PayloadHash: UnsignedPayload}
	q := r.URL.Query()
	var access, sig, date string
	if header != "" {
		cred, ok := strings.CutPrefix(header, "AWS ")
		i := strings.LastIndexByte(cred, ':')
		if !ok || i <= 0 {
			return res, fmt.Errorf("%w: %q", ErrMalformed, header)
		}
		access, sig = cred[:i], cred[i+1:]
		var t time.Time
		var err error
		switch {
		case r.Header.Get("X-Amz-Date") != "":
			t, err = parseHTTPDate(r.Header.Get("X-Amz-Date"))
		case r.Header.Get("Date") != "":
			t, err = parseHTTPDate(r.Header.Get("Date"))
			date = r.Header.Get("Date")
		default:
			return res, fmt.Errorf("%w: no Date or x-amz-date header", ErrMalformed)
		}
		if err != nil {
			return res, fmt.Errorf("%w: date: %w", ErrMalformed, err)
		}
		if d := v.now().Sub(t); d > MaxSkew || d < -MaxSkew {
			return res, fmt.Errorf("%w: request time %s", ErrSkewed, t.UTC().Format(time.RFC1123))
		}
	} else {
		access, sig, date = q.Get("AWSAccessKeyId"), q.Get("Signature"), q.Get("Expires")
		exp, err := strconv.ParseInt(date, 10, 64)
		if access == "" || sig == "" || err != nil {
			return res, fmt.Errorf("%w: AWSAccessKeyId, Signature and Expires are needed", ErrQueryMalformed)
		}
		if v.now().Unix() > exp {
			return res, fmt.Errorf("%w: expired at %s", ErrExpired, time.Unix(exp, 0).UTC().Format(time.RFC3339))
		}
	}
	res.AccessKey = access
	secret, err := v.lookup(ctx, access)
	if err != nil {
		return res, err
	}
	bucket := ""
	if v.hostBucket != nil {
		bucket = v.hostBucket(r)
	}
	sts := stringToSignV2(r, date, bucket)
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(sts))
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return res, fmt.Errorf("%w: access key %s (signature version 2)", ErrMismatch, access)
	}
	return res, nil
}

// stringToSignV2 is what a V2 signature signs; bucket is the bucket a
// virtual-host request names by its host ("" for path style).
func stringToSignV2(r *http.Request, date, bucket string) string {
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	b.WriteString(r.Header.Get("Content-Md5") + "\n")
	b.WriteString(r.Header.Get("Content-Type") + "\n")
	b.WriteString(date + "\n")
	var amz []string
	vals := map[string][]string{}
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-amz-") {
			if _, ok := vals[lk]; !ok {
				amz = append(amz, lk)
			}
			for _, v := range vs {
				vals[lk] = append(vals[lk], strings.Join(strings.Fields(v), " "))
			}
		}
	}
	sort.Strings(amz)
	for _, k := range amz {
		b.WriteString(k + ":" + strings.Join(vals[k], ",") + "\n")
	}
	path := r.URL.EscapedPath()
	if raw := r.RequestURI; raw != "" && !strings.HasPrefix(raw, "http") {
		path, _, _ = strings.Cut(raw, "?")
	}
	if bucket != "" {
		path = "/" + bucket + path
	}
	b.WriteString(path)
	var subs []string
	for _, part := range strings.Split(r.URL.RawQuery, "&") {
		k, val, hasVal := strings.Cut(part, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil || !v2SubResources[dk] {
			continue
		}
		if hasVal {
			dv, err := url.QueryUnescape(val)
			if err != nil {
				dv = val
			}
			subs = append(subs, dk+"="+dv)
		} else {
			subs = append(subs, dk)
		}
	}
	sort.Strings(subs)
	if len(subs) > 0 {
		b.WriteString("?" + strings.Join(subs, "&"))
	}
	return b.String()
}

// parseHTTPDate parses an HTTP date, also with a numeric zone (RFC 1123Z),
// as clients send it.
func parseHTTPDate(s string) (time.Time, error) {
	if t, err := http.ParseTime(s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC1123Z, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(timeFormat, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC1123, s)
}

package sigv4

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Errors; test for them with errors.Is.
var (
	// ErrMissing: the request carries no signature (anonymous).
	ErrMissing = errors.New("sigv4: no signature")
	// ErrMalformed: the Authorization header or the presigned query
	// parameters do not parse.
	ErrMalformed = errors.New("sigv4: malformed authorization")
	// ErrQueryMalformed: the presigned query parameters do not parse.
	ErrQueryMalformed = errors.New("sigv4: malformed presigned query")
	// ErrUnknownKey: no secret for the access key.
	ErrUnknownKey = errors.New("sigv4: unknown access key")
	// ErrMismatch: the signature is not the one the secret gives.
	ErrMismatch = errors.New("sigv4: signature does not match")
	// ErrSkewed: the request's time is too far from the server's.
	ErrSkewed = errors.New("sigv4: request time too skewed")
	// ErrExpired: a presigned URL past its expiry.
	ErrExpired = errors.New("sigv4: request has expired")
	// ErrPayloadHash: the body's SHA-256 is not the one signed.
	ErrPayloadHash = errors.New("sigv4: payload SHA-256 mismatch")
	// ErrUnsupported: another algorithm (ECDSA, ...).
	ErrUnsupported = errors.New("sigv4: unsupported authorization")
	// ErrChunk: an aws-chunked body does not parse or a chunk's
	// signature is wrong.
	ErrChunk = errors.New("sigv4: bad aws-chunked body")
)

// Payload hash values with meanings of their own.
const (
	UnsignedPayload          = "UNSIGNED-PAYLOAD"
	StreamingSigned          = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	StreamingSignedTrailer   = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	algorithm                = "AWS4-HMAC-SHA256"
	timeFormat               = "20060102T150405Z"
	// MaxSkew is how far a header-signed request's time may be from the
	// server's (S3's 15 minutes).
	MaxSkew = 15 * time.Minute
	// MaxExpires bounds a presigned URL's X-Amz-Expires (7 days).
	MaxExpires = 7 * 24 * time.Hour
)

// Lookup returns the secret key of an access key, or an error wrapping
// ErrUnknownKey.
type Lookup func(ctx context.Context, accessKey string) (secret string, err error)

// Verifier checks requests' signatures.
type Verifier struct {
	lookup     Lookup
	now        func() time.Time
	hostBucket func(*http.Request) string
}

// New returns a Verifier that finds secrets with lookup and reads the
// time from now (time.Now when nil).
func New(lookup Lookup, now func() time.Time, opts ...Option) *Verifier {
	if now == nil {
		now = time.Now
	}
	v := &Verifier{lookup: lookup, now: now}
	for _, o := range opts {
		o(v)
	}
	return v
}

// Result is what a verified request carries on.
type Result struct {
	// AccessKey is the key that signed.
	AccessKey string
	// PayloadHash is the signed x-amz-content-sha256 (a hex SHA-256,
	// UnsignedPayload or a streaming value).
	PayloadHash string
	// Body, when not nil, replaces the request body: it checks a signed
	// payload's hash at EOF or decodes an aws-chunked body.
	Body io.Reader
	// DecodedLength is x-amz-decoded-content-length of a streaming
	// body (-1 otherwise).
	DecodedLength int64
}

// auth is a parsed signature: from the header or the query.
type auth struct {
	accessKey, date, region, service string
	signedHeaders                    []string
	signature                        string
	amzDate                          time.Time
	presigned                        bool
}

func (a auth) scope() string {
	return a.date + "/" + a.region + "/" + a.service + "/aws4_request"
}

// Verify checks r's signature and returns the key that signed it.
func (v *Verifier) Verify(ctx context.Context, r *http.Request) (Result, error) {
	res := Result{DecodedLength: -1}
	q := r.URL.Query()
	var a auth
	var err error
	switch h := r.Header.Get("Authorization"); {
	case strings.HasPrefix(h, "AWS "):
		return v.verifyV2(ctx, r, h)
	case h != "":
		a, err = parseHeader(h, r)
	case q.Get("X-Amz-Algorithm") != "" || q.Get("X-Amz-Signature") != "":
		a, err = parseQuery(q, v.now())
	case q.Get("Signature") != "" || q.Get("AWSAccessKeyId") != "":
		return v.verifyV2(ctx, r, "")
	default:
		return res, ErrMissing
	}
	if err != nil {
		return res, err
	}
	res.AccessKey = a.accessKey
	if !a.presigned {
		if d := v.now().Sub(a.amzDate); d > MaxSkew || d < -MaxSkew {
			return res, fmt.Errorf("%w: request time %s, server time %s", ErrSkewed, a.amzDate.Format(timeFormat), v.now().UTC().Format(timeFormat))
		}
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if a.presigned {
		if p := q.Get("X-Amz-Content-Sha256"); p != "" {
			payload = p
		} else {
			payload = UnsignedPayload
		}
	} else if payload == "" {
		return res, fmt.Errorf("%w: missing x-amz-content-sha256", ErrMalformed)
	}
	res.PayloadHash = payload
	secret, err := v.lookup(ctx, a.accessKey)
	if err != nil {
		return res, err
	}
	creq, err := canonicalRequest(r, a, payload)
	if err != nil {
		return res, err
	}
	key := signingKey(secret, a.date, a.region, a.service)
	want := hex.EncodeToString(hmacSHA256(key, []byte(stringToSign(a, creq))))
	if !hmac.Equal([]byte(want), []byte(a.signature)) {
		return res, fmt.Errorf("%w: access key %s", ErrMismatch, a.accessKey)
	}
	switch payload {
	case UnsignedPayload:
	case StreamingSigned, StreamingUnsignedTrailer, StreamingSignedTrailer:
		n, err := strconv.ParseInt(r.Header.Get("X-Amz-Decoded-Content-Length"), 10, 64)
		if err != nil || n < 0 {
			return res, fmt.Errorf("%w: bad x-amz-decoded-content-length %q", ErrMalformed, r.Header.Get("X-Amz-Decoded-Content-Length"))
		}
		res.DecodedLength = n
		cr := NewChunkReader(r.Body, n)
		if payload == StreamingSigned || payload == StreamingSignedTrailer {
			cr.signed = &chunkSigner{key: key, amzDate: a.amzDate.Format(timeFormat), scope: a.scope(), prev: a.signature}
			cr.trailerSigned = payload == StreamingSignedTrailer
		}
		res.Body = cr
	default:
		want, err := hex.DecodeString(payload)
		if err != nil || len(want) != sha256.Size {
			return res, fmt.Errorf("%w: x-amz-content-sha256 %q", ErrMalformed, payload)
		}
		res.Body = &hashReader{r: r.Body, h: sha256.New(), want: want}
	}
	return res, nil
}

// parseHeader parses "AWS4-HMAC-SHA256 Credential=AK/20240101/us-east-1/s3/aws4_request,
// SignedHeaders=host;x-amz-date, Signature=hex".
func parseHeader(h string, r *http.Request) (auth, error) {
	var a auth
	alg, rest, ok := strings.Cut(h, " ")
	if !ok {
		return a, fmt.Errorf("%w: %q", ErrMalformed, h)
	}
	if alg != algorithm {
		return a, fmt.Errorf("%w: algorithm %q", ErrUnsupported, alg)
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return a, fmt.Errorf("%w: %q", ErrMalformed, part)
		}
		fields[k] = v
	}
	if err := a.parseCredential(fields["Credential"], ErrMalformed); err != nil {
		return a, err
	}
	a.signature = fields["Signature"]
	if fields["SignedHeaders"] == "" || a.signature == "" {
		return a, fmt.Errorf("%w: missing SignedHeaders or Signature", ErrMalformed)
	}
	a.signedHeaders = strings.Split(fields["SignedHeaders"], ";")
	ds := r.Header.Get("X-Amz-Date")
	var err error
	if ds != "" {
		a.amzDate, err = time.Parse(timeFormat, ds)
	} else if ds = r.Header.Get("Date"); ds != "" {
		a.amzDate, err = parseHTTPDate(ds)
	} else {
		return a, fmt.Errorf("%w: no x-amz-date or date header", ErrMalformed)
	}
	if err != nil {
		return a, fmt.Errorf("%w: date %q", ErrMalformed, ds)
	}
	if a.amzDate.UTC().Format("20060102") != a.date {
		return a, fmt.Errorf("%w: credential date %s is not the request's %s", ErrMalformed, a.date, ds)
	}
	return a, nil
}

func (a *auth) parseCredential(c string, sentinel error) error {
	p := strings.Split(c, "/")
	if len(p) != 5 || p[0] == "" || p[4] != "aws4_request" || len(p[1]) != 8 {
		return fmt.Errorf("%w: credential %q", sentinel, c)
	}
	a.accessKey, a.date, a.region, a.service = p[0], p[1], p[2], p[3]
	return nil
}

// parseQuery parses a presigned URL's X-Amz-* parameters and checks its
// expiry against now.
func parseQuery(q url.Values, now time.Time) (auth, error) {
	a := auth{presigned: true}
	if q.Get("X-Amz-Algorithm") != algorithm {
		return a, fmt.Errorf("%w: X-Amz-Algorithm %q", ErrQueryMalformed, q.Get("X-Amz-Algorithm"))
	}
	if err := a.parseCredential(q.Get("X-Amz-Credential"), ErrQueryMalformed); err != nil {
		return a, err
	}
	var err error
	if a.amzDate, err = time.Parse(timeFormat, q.Get("X-Amz-Date")); err != nil {
		return a, fmt.Errorf("%w: X-Amz-Date %q", ErrQueryMalformed, q.Get("X-Amz-Date"))
	}
	exp, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	if err != nil || exp < 0 || time.Duration(exp)*time.Second > MaxExpires {
		return a, fmt.Errorf("%w: X-Amz-Expires %q (0 to 604800 seconds)", ErrQueryMalformed, q.Get("X-Amz-Expires"))
	}
	if now.After(a.amzDate.Add(time.Duration(exp) * time.Second)) {
		return a, fmt.Errorf("%w: signed at %s for %d seconds", ErrExpired, a.amzDate.Format(timeFormat), exp)
	}
	if a.amzDate.After(now.Add(MaxSkew)) {
		return a, fmt.Errorf("%w: signed at %s, in the future", ErrSkewed, a.amzDate.Format(timeFormat))
	}
	a.signature = q.Get("X-Amz-Signature")
	sh := q.Get("X-Amz-SignedHeaders")
	if a.signature == "" || sh == "" {
		return a, fmt.Errorf("%w: missing X-Amz-Signature or X-Amz-SignedHeaders", ErrQueryMalformed)
	}
	a.signedHeaders = strings.Split(sh, ";")
	return a, nil
}

// canonicalRequest is the request as SigV4 hashes it.
func canonicalRequest(r *http.Request, a auth, payload string) (string, error) {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	path := r.URL.EscapedPath()
	if raw := r.RequestURI; raw != "" && !strings.HasPrefix(raw, "http") {
		path, _, _ = strings.Cut(raw, "?")
	}
	dec, err := url.PathUnescape(path)
	if err != nil {
		return "", fmt.Errorf("%w: path %q", ErrMalformed, path)
	}
	if dec == "" {
		dec = "/"
	}
	b.WriteString(uriEncode(dec, false))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.RawQuery, a.presigned))
	b.WriteByte('\n')
	for _, h := range a.signedHeaders {
		b.WriteString(h)
		b.WriteByte(':')
		b.WriteString(headerValue(r, h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(a.signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(payload)
	return b.String(), nil
}

// headerValue is a signed header's canonical value: values trimmed, runs
// of spaces collapsed, several values joined by commas.
func headerValue(r *http.Request, name string) string {
	var vals []string
	switch name {
	case "host":
		vals = []string{r.Host}
	case "content-length":
		vals = r.Header.Values("Content-Length")
		if len(vals) == 0 && r.ContentLength >= 0 {
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	case "transfer-encoding":
		vals = r.TransferEncoding
	default:
		vals = r.Header.Values(name)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(out, ",")
}

// canonicalQuery sorts the query's encoded pairs; a presigned request
// leaves out its signature.
func canonicalQuery(raw string, presigned bool) string {
	type kv struct{ k, v string }
	var pairs []kv
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil {
			dk = k
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			dv = v
		}
		if presigned && dk == "X-Amz-Signature" {
			continue
		}
		pairs = append(pairs, kv{uriEncode(dk, true), uriEncode(dv, true)})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p.k + "=" + p.v
	}
	return strings.Join(parts, "&")
}

// uriEncode percent-encodes every byte but the unreserved ones (and '/'
// unless slash).
func uriEncode(s string, slash bool) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || (c == '/' && !slash) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexd[c>>4])
		b.WriteByte(hexd[c&15])
	}
	return b.String()
}

func stringToSign(a auth, creq string) string {
	h := sha256.Sum256([]byte(creq))
	return algorithm + "\n" + a.amzDate.UTC().Format(timeFormat) + "\n" + a.scope() + "\n" + hex.EncodeToString(h[:])
}

func hmacSHA256(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}

// signingKey derives the key of one day, region and service.
func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), []byte(date))
	k = hmacSHA256(k, []byte(region))
	k = hmacSHA256(k, []byte(service))
	return hmacSHA256(k, []byte("aws4_request"))
}

// hashReader passes a body through and fails at EOF if its SHA-256 is
// not the signed one.
type hashReader struct {
	r io.Reader
	h interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
	want []byte
}

func (h *hashReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	if err == io.EOF && !hmac.Equal(h.h.Sum(nil), h.want) {
		return n, ErrPayloadHash
	}
	return n, err
}

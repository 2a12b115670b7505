package s3gw

import (
	"encoding/xml"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// CORS as S3 does it (the S3 API reference: PutBucketCors; the user
// guide's "Using cross-origin resource sharing (CORS)"): a bucket's
// configuration is up to 100 rules, each naming the origins (one `*` at
// most in each), the methods (GET, PUT, POST, DELETE, HEAD), the request
// headers (one `*` at most, matched without case) a cross-origin request
// may use, the response headers a browser may expose, and how long a
// preflight's answer may be cached. The first rule that matches decides.
//
// A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
// answered without authentication: 200 with the Access-Control-Allow-*
// headers, or 403 "CORSResponse: ...". An actual request whose Origin a
// rule allows for its method gets Access-Control-Allow-Origin,
// -Allow-Methods, -Expose-Headers, -Max-Age and Vary: Origin, whatever
// else the request's answer is. The configuration is the bucket owner's
// (or whoever its policy allows s3:GetBucketCORS / s3:PutBucketCORS,
// the latter also deleting it, as in S3).

var (
	errNoSuchCORS    = &apiError{"NoSuchCORSConfiguration", 404, "The CORS configuration does not exist"}
	errCORSForbidden = &apiError{"AccessForbidden", 403, "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."}
	errCORSDisabled  = &apiError{"AccessForbidden", 403, "CORSResponse: CORS is not enabled for this bucket."}
	errCORSBadReq    = &apiError{"BadRequest", 400, "Insufficient information. Origin request header needed."}
)

// corsConfiguration is PutBucketCors's body and GetBucketCors's answer.
type corsConfiguration struct {
	XMLName xml.Name      `xml:"CORSConfiguration"`
	Xmlns   string        `xml:"xmlns,attr,omitempty"`
	Rules   []corsRuleXML `xml:"CORSRule"`
}

type corsRuleXML struct {
	ID            string   `xml:"ID,omitempty"`
	AllowedHeader []string `xml:"AllowedHeader"`
	AllowedMethod []string `xml:"AllowedMethod"`
	AllowedOrigin []string `xml:"AllowedOrigin"`
	ExposeHeader  []string `xml:"ExposeHeader"`
	MaxAgeSeconds *int64   `xml:"MaxAgeSeconds"`
}

// maxCORSDoc bounds a CORS configuration (S3's limit, 64 KB).
const maxCORSDoc = 64 << 10

var corsMethods = []string{"GET", "PUT", "POST", "DELETE", "HEAD"}

// parseCORS reads and validates a CORSConfiguration.
func parseCORS(r *http.Request) ([]meta.CORSRule, error) {
	body, err := readXMLBody(r.Body)
	if err != nil {
		return nil, err
	}
	if len(body) > maxCORSDoc {
		return nil, errMaxMessageLength.withMessage("A CORS configuration is at most %d bytes; this one is %d.", maxCORSDoc, len(body))
	}
	var doc corsConfiguration
	if err := decodeXMLBytes(body, &doc); err != nil {
		return nil, err
	}
	if len(doc.Rules) == 0 {
		return nil, errMalformedXML.withMessage("A CORSConfiguration needs at least one CORSRule.")
	}
	if len(doc.Rules) > meta.MaxCORSRules {
		return nil, errMalformedXML.withMessage("A CORSConfiguration holds at most %d rules; this one has %d.", meta.MaxCORSRules, len(doc.Rules))
	}
	rules := make([]meta.CORSRule, 0, len(doc.Rules))
	for _, x := range doc.Rules {
		if len(x.AllowedOrigin) == 0 || len(x.AllowedMethod) == 0 {
			return nil, errMalformedXML.withMessage("A CORSRule needs an AllowedOrigin and an AllowedMethod.")
		}
		if len(x.ID) > 255 {
			return nil, errInvalidArgument.withMessage("A CORSRule's ID is at most 255 characters.")
		}
		for _, list := range [][]string{x.AllowedOrigin, x.AllowedMethod, x.AllowedHeader, x.ExposeHeader} {
			if len(list) > meta.MaxCORSList {
				return nil, errMalformedXML.withMessage("A CORSRule lists at most %d of each element.", meta.MaxCORSList)
			}
			for _, v := range list {
				if len(v) > meta.MaxCORSValue {
					return nil, errInvalidArgument.withMessage("A CORSRule's values are at most %d bytes.", meta.MaxCORSValue)
				}
			}
		}
		for _, m := range x.AllowedMethod {
			if !slices.Contains(corsMethods, m) {
				return nil, errInvalidRequest.withMessage("Found unsupported HTTP method in CORS config. Unsupported method is %s", m)
			}
		}
		for _, o := range x.AllowedOrigin {
			if strings.Count(o, "*") > 1 {
				return nil, errInvalidRequest.withMessage("AllowedOrigin %q can not have more than one wildcard.", o)
			}
		}
		for _, h := range x.AllowedHeader {
			if strings.Count(h, "*") > 1 {
				return nil, errInvalidRequest.withMessage("AllowedHeader %q can not have more than one wildcard.", h)
			}
		}
		rule := meta.CORSRule{ID: x.ID, AllowedOrigins: x.AllowedOrigin, AllowedMethods: x.AllowedMethod,
			AllowedHeaders: x.AllowedHeader, ExposeHeaders: x.ExposeHeader, MaxAgeSeconds: -1}
		if x.MaxAgeSeconds != nil {
			if *x.MaxAgeSeconds < 0 {
				return nil, errMalformedXML.withMessage("MaxAgeSeconds is a number of seconds, not %d.", *x.MaxAgeSeconds)
			}
			rule.MaxAgeSeconds = *x.MaxAgeSeconds
		}
		rules = append(rules, rule)
	}
	return rules, nil
}

func (g *Gateway) getBucketCORS(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:GetBucketCORS")
	if err != nil {
		return err
	}
	if len(b.CORS) == 0 {
		return errNoSuchCORS
	}
	doc := corsConfiguration{Xmlns: xmlns}
	for _, rule := range b.CORS {
		x := corsRuleXML{ID: rule.ID, AllowedHeader: rule.AllowedHeaders, AllowedMethod: rule.AllowedMethods,
			AllowedOrigin: rule.AllowedOrigins, ExposeHeader: rule.ExposeHeaders}
		if rule.MaxAgeSeconds >= 0 {
			x.MaxAgeSeconds = &rule.MaxAgeSeconds
		}
		doc.Rules = append(doc.Rules, x)
	}
	writeXML(w, http.StatusOK, doc)
	return nil
}

func (g *Gateway) putBucketCORS(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutBucketCORS")
	if err != nil {
		return err
	}
	rules, err := parseCORS(r)
	if err != nil {
		return err
	}
	if _, err := g.meta.SetBucketCORS(r.Context(), b, rules); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *Gateway) deleteBucketCORS(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutBucketCORS")
	if err != nil {
		return err
	}
	if len(b.CORS) > 0 {
		if _, err := g.meta.SetBucketCORS(r.Context(), b, nil); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// wildMatch matches s against a pattern with at most one `*`.
func wildMatch(pattern, s string) bool {
	pre, post, wild := strings.Cut(pattern, "*")
	if !wild {
		return pattern == s
	}
	return len(s) >= len(pre)+len(post) && strings.HasPrefix(s, pre) && strings.HasSuffix(s, post)
}

// corsMatch is the first rule allowing origin to use method with the
// request headers hdrs (lowercase), and the origin pattern that matched.
func corsMatch(rules []meta.CORSRule, origin, method string, hdrs []string) (meta.CORSRule, string, bool) {
	for _, rule := range rules {
		if !slices.Contains(rule.AllowedMethods, method) {
			continue
		}
		i := slices.IndexFunc(rule.AllowedOrigins, func(p string) bool { return wildMatch(p, origin) })
		if i < 0 {
			continue
		}
		allHeaders := true
		for _, h := range hdrs {
			if !slices.ContainsFunc(rule.AllowedHeaders, func(p string) bool { return wildMatch(strings.ToLower(p), h) }) {
				allHeaders = false
				break
			}
		}
		if allHeaders {
			return rule, rule.AllowedOrigins[i], true
		}
	}
	return meta.CORSRule{}, "", false
}

// setCORSHeaders sends what rule allows origin (the pattern that matched
// it: `*` is answered as `*`).
func setCORSHeaders(h http.Header, rule meta.CORSRule, origin, pattern string) {
	if pattern == "*" {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Allow-Methods", strings.Join(rule.AllowedMethods, ", "))
	if len(rule.ExposeHeaders) > 0 {
		h.Set("Access-Control-Expose-Headers", strings.Join(rule.ExposeHeaders, ", "))
	}
	if rule.MaxAgeSeconds >= 0 {
		h.Set("Access-Control-Max-Age", strconv.FormatInt(rule.MaxAgeSeconds, 10))
	}
	h.Add("Vary", "Origin")
}

// preflight answers an OPTIONS request, unauthenticated.
func (g *Gateway) preflight(w http.ResponseWriter, r *http.Request, rq *request) error {
	origin, method := r.Header.Get("Origin"), r.Header.Get("Access-Control-Request-Method")
	if origin == "" {
		return errCORSBadReq
	}
	if method == "" {
		return errCORSBadReq.withMessage("Insufficient information. Access-Control-Request-Method request header needed.")
	}
	b, err := g.bucketNamed(r.Context(), rq.bucket)
	if err != nil {
		return err
	}
	if len(b.CORS) == 0 {
		return errCORSDisabled
	}
	var hdrs []string
	for _, v := range r.Header.Values("Access-Control-Request-Headers") {
		for _, h := range strings.Split(v, ",") {
			if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
				hdrs = append(hdrs, h)
			}
		}
	}
	rule, pattern, ok := corsMatch(b.CORS, origin, method, hdrs)
	if !ok {
		return errCORSForbidden
	}
	h := w.Header()
	setCORSHeaders(h, rule, origin, pattern)
	if len(hdrs) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(hdrs, ", "))
	}
	h.Add("Vary", "Access-Control-Request-Headers")
	h.Add("Vary", "Access-Control-Request-Method")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// corsActual adds the CORS headers to an actual cross-origin request's
// answer when a rule of its bucket allows its Origin and method. A
// bucket that cannot be read adds none: the request's own answer says
// why.
func (g *Gateway) corsActual(w http.ResponseWriter, r *http.Request, rq *request) {
	origin := r.Header.Get("Origin")
	if origin == "" || rq.bucket == "" {
		return
	}
	b, err := g.bucketNamed(r.Context(), rq.bucket)
	if err != nil || len(b.CORS) == 0 {
		return
	}
	if rule, pattern, ok := corsMatch(b.CORS, origin, r.Method, nil); ok {
		setCORSHeaders(w.Header(), rule, origin, pattern)
	}
}

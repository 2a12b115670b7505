package meta

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// CORSRule is one rule of a bucket's CORS configuration, as
// PutBucketCors gave it.
type CORSRule struct {
	ID             string
	AllowedOrigins []string
	AllowedMethods []string
	AllowedHeaders []string
	ExposeHeaders  []string
	// MaxAgeSeconds is how long a browser may cache a preflight's
	// answer; negative when the rule does not say.
	MaxAgeSeconds int64
}

// Bounds of a stored CORS configuration: S3's 100 rules; the lists and
// strings are bounded by the 64 KiB document they came from.
const (
	MaxCORSRules = 100
	MaxCORSList  = 1 << 10 // origins, methods, headers of a rule
	MaxCORSValue = 1 << 10 // bytes of one
)

func encodeStrings(e *encoding.Encoder, ss []string) {
	e.Uvarint(uint64(len(ss)))
	for _, s := range ss {
		e.String(s)
	}
}

func decodeStrings(d *encoding.Decoder) []string {
	n := d.Count(1)
	if n > MaxCORSList {
		d.Fail(fmt.Errorf("a list of %d", n))
		return nil
	}
	var ss []string
	for i := 0; i < n && d.Err() == nil; i++ {
		ss = append(ss, d.String(MaxCORSValue))
	}
	return ss
}

func encodeCORS(e *encoding.Encoder, rules []CORSRule) {
	e.Uvarint(uint64(len(rules)))
	for _, r := range rules {
		e.String(r.ID)
		encodeStrings(e, r.AllowedOrigins)
		encodeStrings(e, r.AllowedMethods)
		encodeStrings(e, r.AllowedHeaders)
		encodeStrings(e, r.ExposeHeaders)
		e.Varint(r.MaxAgeSeconds)
	}
}

// decodeCORS reads CORS rules; none decodes as nil.
func decodeCORS(d *encoding.Decoder) []CORSRule {
	n := d.Count(6)
	if n > MaxCORSRules {
		d.Fail(fmt.Errorf("%d CORS rules", n))
		return nil
	}
	var rules []CORSRule
	for i := 0; i < n && d.Err() == nil; i++ {
		rules = append(rules, CORSRule{
			ID:             d.String(MaxCORSValue),
			AllowedOrigins: decodeStrings(d),
			AllowedMethods: decodeStrings(d),
			AllowedHeaders: decodeStrings(d),
			ExposeHeaders:  decodeStrings(d),
			MaxAgeSeconds:  d.Varint(),
		})
	}
	return rules
}

package s3gw

import (
	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"net"
	"net/http"
	"strings"
)

// validBucketName follows the S3 naming rules (S3 user guide, "Bucket
// naming rules"): 3 to 63 characters of lowercase letters, digits, dots
// and hyphens, beginning and ending with a letter or digit, no two dots
// (or a dot and a hyphen) together, not an IP address, not beginning with
// "xn--" or "sthree-" nor ending with "-s3alias" or "--ol-s3".
func validBucketName(name string) bool {
	if len(name) < 3 || len(name) > 63 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	if !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return false
	}
	if strings.Contains(name, "..") || strings.Contains(name, ".-") || strings.Contains(name, "-.") {
		return false
	}
	if net.ParseIP(name) != nil {
		return false
	}
	for _, p := range []string{"xn--", "sthree-"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	for _, s := range []string{"-s3alias", "--ol-s3"} {
		if strings.HasSuffix(name, s) {
			return false
		}
	}
	return true
}

// listBuckets lists the buckets the user owns (none for an anonymous
// request, as radosgw answers).
func (g *Gateway) listBuckets(w http.ResponseWriter, r *http.Request, rq *request) error {
	var bs []meta.Bucket
	if rq.who() != "" {
		var err error
		if bs, err = g.meta.ListBuckets(r.Context(), rq.who()); err != nil {
			return err
		}
	}
	res := listAllMyBucketsResult{Xmlns: xmlns, Owner: g.owner(rq.user), Buckets: []bucketEntry{}}
	for _, b := range bs {
		res.Buckets = append(res.Buckets, bucketEntry{Name: b.Name, CreationDate: s3Time(b.Created)})
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

func (g *Gateway) createBucket(w http.ResponseWriter, r *http.Request, rq *request) error {
	if rq.who() == "" {
		return errAccessDenied.withMessage("Anonymous users cannot create buckets: sign the request.")
	}
	if !validBucketName(rq.bucket) {
		return errInvalidBucketName.withMessage("The specified bucket %q is not valid: 3 to 63 lowercase letters, digits, dots and hyphens, beginning and ending with a letter or digit.", rq.bucket)
	}
	region := g.cfg.Region
	if r.ContentLength != 0 {
		var c createBucketConfiguration
		if err := decodeXML(r.Body, &c); err != nil {
			return err
		}
		if c.LocationConstraint != "" && c.LocationConstraint != g.cfg.Region {
			return errInvalidArgument.withMessage("InvalidLocationConstraint: this gateway serves region %q, not %q", g.cfg.Region, c.LocationConstraint)
		}
	}
	acl, err := g.requestACL(r.Context(), r.Header, rq.who(), rq.who())
	if err != nil {
		return err
	}
	ownership, err := createOwnership(r.Header, acl, rq.who())
	if err != nil {
		return err
	}
	_, err = g.meta.CreateBucket(r.Context(), rq.bucket, rq.who(), region, acl, func(b *meta.Bucket) { b.Ownership = ownership })
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/"+rq.bucket)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *Gateway) headBucket(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.bucketFor(r.Context(), rq, meta.PermRead, "s3:ListBucket")
	if err != nil {
		return err
	}
	w.Header().Set("x-amz-bucket-region", b.Region)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *Gateway) deleteBucket(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:DeleteBucket")
	if err != nil {
		return err
	}
	if err := g.meta.DeleteBucket(r.Context(), b); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (g *Gateway) getBucketLocation(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:GetBucketLocation")
	if err != nil {
		return err
	}
	loc := b.Region
	if loc == "us-east-1" {
		loc = "" // as S3 answers for us-east-1
	}
	writeXML(w, http.StatusOK, locationConstraint{Xmlns: xmlns, Value: loc})
	return nil
}

func (g *Gateway) getBucketVersioning(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:GetBucketVersioning")
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, versioningConfiguration{Xmlns: xmlns, Status: b.Versioning})
	return nil
}

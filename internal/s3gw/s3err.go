package s3gw

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/internal/s3gw/sigv4"
	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// apiError is an S3 error: its code, HTTP status and message.
type apiError struct {
	Code    string
	Status  int
	Message string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// The S3 errors the gateway returns (the S3 API reference's "Error
// responses" table).
var (
	errAccessDenied          = &apiError{"AccessDenied", 403, "Access Denied"}
	errBadDigest             = &apiError{"BadDigest", 400, "The Content-MD5 you specified did not match what we received."}
	errBucketAlreadyExists   = &apiError{"BucketAlreadyExists", 409, "The requested bucket name is not available."}
	errBucketOwnedByYou      = &apiError{"BucketAlreadyOwnedByYou", 409, "Your previous request to create the named bucket succeeded and you already own it."}
	errBucketNotEmpty        = &apiError{"BucketNotEmpty", 409, "The bucket you tried to delete is not empty."}
	errEntityTooSmall        = &apiError{"EntityTooSmall", 400, "Your proposed upload is smaller than the minimum allowed object size."}
	errEntityTooLarge        = &apiError{"EntityTooLarge", 400, "Your proposed upload exceeds the maximum allowed object size."}
	errIncompleteBody        = &apiError{"IncompleteBody", 400, "You did not provide the number of bytes specified by the Content-Length HTTP header."}
	errInternal              = &apiError{"InternalError", 500, "We encountered an internal error. Please try again."}
	errInvalidArgument       = &apiError{"InvalidArgument", 400, "Invalid Argument"}
	errInvalidBucketName     = &apiError{"InvalidBucketName", 400, "The specified bucket is not valid."}
	errInvalidDigest         = &apiError{"InvalidDigest", 400, "The Content-MD5 you specified is not valid."}
	errInvalidPart           = &apiError{"InvalidPart", 400, "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."}
	errInvalidPartOrder      = &apiError{"InvalidPartOrder", 400, "The list of parts was not in ascending order. Parts must be ordered by part number."}
	errInvalidRange          = &apiError{"InvalidRange", 416, "The requested range is not satisfiable"}
	errInvalidRequest        = &apiError{"InvalidRequest", 400, "Invalid Request"}
	errInvalidAccessKeyID    = &apiError{"InvalidAccessKeyId", 403, "The AWS access key Id you provided does not exist in our records."}
	errKeyTooLong            = &apiError{"KeyTooLongError", 400, "Your key is too long."}
	errMalformedXML          = &apiError{"MalformedXML", 400, "The XML you provided was not well-formed or did not validate against our published schema."}
	errMethodNotAllowed      = &apiError{"MethodNotAllowed", 405, "The specified method is not allowed against this resource."}
	errMissingContentLength  = &apiError{"MissingContentLength", 411, "You must provide the Content-Length HTTP header."}
	errNoSuchBucket          = &apiError{"NoSuchBucket", 404, "The specified bucket does not exist."}
	errNoSuchKey             = &apiError{"NoSuchKey", 404, "The specified key does not exist."}
	errNoSuchUpload          = &apiError{"NoSuchUpload", 404, "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed."}
	errNotImplemented        = &apiError{"NotImplemented", 501, "A header or query you provided implies functionality that is not implemented."}
	errPreconditionFailed    = &apiError{"PreconditionFailed", 412, "At least one of the preconditions you specified did not hold."}
	errRequestTimeTooSkewed  = &apiError{"RequestTimeTooSkewed", 403, "The difference between the request time and the server's time is too large."}
	errSignatureDoesNotMatch = &apiError{"SignatureDoesNotMatch", 403, "The request signature we calculated does not match the signature you provided. Check your key and signing method."}
	errAuthHeaderMalformed   = &apiError{"AuthorizationHeaderMalformed", 400, "The authorization header is malformed."}
	errAuthQueryMalformed    = &apiError{"AuthorizationQueryParametersError", 400, "Error parsing the X-Amz-Credential parameter."}
	errContentSHA256Mismatch = &apiError{"XAmzContentSHA256Mismatch", 400, "The provided 'x-amz-content-sha256' header does not match what was computed."}
	errSlowDown              = &apiError{"SlowDown", 503, "Please reduce your request rate."}
	errServiceUnavailable    = &apiError{"ServiceUnavailable", 503, "The cluster is unavailable; retry."}
	errMaxMessageLength      = &apiError{"MaxMessageLengthExceeded", 400, "Your request was too big."}
	errMetadataTooLarge      = &apiError{"MetadataTooLarge", 400, "Your metadata headers exceed the maximum allowed metadata size."}
	errInvalidStorageClass   = &apiError{"InvalidStorageClass", 400, "The storage class you specified is not valid."}
	errNotModified           = &apiError{"NotModified", 304, "Not Modified"}
	errNoSuchVersion         = &apiError{"NoSuchVersion", 404, "The specified version does not exist."}
)

// withMessage returns a copy of e saying msg.
func (e *apiError) withMessage(format string, args ...any) *apiError {
	c := *e
	c.Message = fmt.Sprintf(format, args...)
	return &c
}

// translate is the one place errors become S3 errors.
func translate(err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, sigv4.ErrMissing):
		return errAccessDenied.withMessage("Anonymous access is not allowed: sign the request (AWS Signature Version 4).")
	case errors.Is(err, sigv4.ErrUnknownKey), errors.Is(err, meta.ErrNoSuchKey):
		return errInvalidAccessKeyID
	case errors.Is(err, sigv4.ErrMismatch):
		return errSignatureDoesNotMatch
	case errors.Is(err, sigv4.ErrSkewed):
		return errRequestTimeTooSkewed
	case errors.Is(err, sigv4.ErrExpired):
		return errAccessDenied.withMessage("Request has expired")
	case errors.Is(err, sigv4.ErrQueryMalformed):
		return errAuthQueryMalformed.withMessage("%v", err)
	case errors.Is(err, sigv4.ErrMalformed):
		return errAuthHeaderMalformed.withMessage("%v", err)
	case errors.Is(err, sigv4.ErrUnsupported):
		return errNotImplemented.withMessage("%v; use Signature Version 4", err)
	case errors.Is(err, sigv4.ErrPayloadHash):
		return errContentSHA256Mismatch
	case errors.Is(err, sigv4.ErrChunk):
		return errSignatureDoesNotMatch.withMessage("%v", err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errIncompleteBody
	case errors.Is(err, meta.ErrNoSuchBucket):
		return errNoSuchBucket
	case errors.Is(err, meta.ErrBucketOwned):
		return errBucketOwnedByYou
	case errors.Is(err, meta.ErrBucketExists):
		return errBucketAlreadyExists
	case errors.Is(err, meta.ErrBucketNotEmpty):
		return errBucketNotEmpty
	case errors.Is(err, meta.ErrNoSuchObject):
		return errNoSuchKey
	case errors.Is(err, meta.ErrNoSuchUpload):
		return errNoSuchUpload
	case errors.Is(err, kv.ErrBusy), errors.Is(err, meta.ErrConflict):
		return errSlowDown
	case errors.Is(err, rados.ErrTimedOut), errors.Is(err, context.DeadlineExceeded):
		return errServiceUnavailable
	}
	return errInternal
}

// errorBody is S3's <Error> document.
type errorBody struct {
	XMLName    xml.Name `xml:"Error"`
	Code       string   `xml:"Code"`
	Message    string   `xml:"Message"`
	Resource   string   `xml:"Resource,omitempty"`
	BucketName string   `xml:"BucketName,omitempty"`
	Key        string   `xml:"Key,omitempty"`
	RequestID  string   `xml:"RequestId"`
	HostID     string   `xml:"HostId"`
}

// writeError sends err as S3 does: its status, and an XML body unless the
// request was a HEAD or the status is 304.
func (g *Gateway) writeError(w http.ResponseWriter, r *http.Request, rq *request, err error) {
	ae := translate(err)
	rq.code = ae.Code
	if ae.Status >= 500 {
		g.log.LogAttrs(r.Context(), slog.LevelWarn, "request failed", slog.String("request", rq.id),
			slog.String("method", r.Method), slog.String("bucket", rq.bucket), slog.String("key", rq.key), slog.Any("err", err))
	} else {
		g.log.LogAttrs(r.Context(), slog.LevelDebug, "request refused", slog.String("request", rq.id),
			slog.String("code", ae.Code), slog.Any("err", err))
	}
	if ae.Status == http.StatusNotModified || r.Method == http.MethodHead {
		w.WriteHeader(ae.Status)
		return
	}
	body := errorBody{Code: ae.Code, Message: ae.Message, Resource: r.URL.Path, BucketName: rq.bucket, Key: rq.key, RequestID: rq.id, HostID: rq.id}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(ae.Status)
	_, _ = io.WriteString(w, xml.Header)
	_ = xml.NewEncoder(w).Encode(body)
}

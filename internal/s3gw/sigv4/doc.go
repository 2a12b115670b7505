// Package sigv4 verifies AWS Signature Version 4 on incoming S3 requests:
// the Authorization header, presigned query-string URLs, unsigned and
// signed payloads, and aws-chunked streaming bodies with a signature per
// chunk (STREAMING-AWS4-HMAC-SHA256-PAYLOAD), per chunk and for the
// trailers (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER) or none
// (STREAMING-UNSIGNED-PAYLOAD-TRAILER); and Signature Version 2 (header
// and presigned query, v2.go) for old clients.
//
// It owns the canonical request built from what arrived on the wire, the
// string to sign, the signing key and the chunk decoder. It must not know
// where secrets are kept (the caller passes a lookup function) nor how
// errors are shown to clients: it returns the sentinels below, which
// internal/s3gw's one error table translates into S3 codes.
//
// Start with [Verifier.Verify]; [NewChunkReader] decodes aws-chunked
// bodies. The primitives are the standard library's HMAC-SHA256 and
// SHA-256; the tests sign requests with aws-sdk-go-v2's signer, so the
// canonicalisation here is checked against AWS's own.
//
// # Concurrency
//
// A Verifier is immutable after construction and safe for concurrent
// use; a ChunkReader belongs to one request.
package sigv4

// Package s3gw is the S3 gateway: an http.Handler speaking the S3 REST
// API over RADOS. It owns the routing (path-style and virtual-host
// addressing), the handlers of buckets, objects, listings and multipart
// uploads, the XML bodies, the one table that turns errors into S3 error
// codes (s3err.go), access control (access.go: ACLs, anonymous requests,
// the pure access decision), tagging (tagging.go), CORS (cors.go: the
// configuration, preflights and the headers of cross-origin requests),
// flexible checksums (checksum.go, crccombine.go), GetObjectAttributes
// (attributes.go), partNumber on GET and HEAD (parts.go), object
// ownership controls, the public access block and the policy status
// (ownership.go), where object data goes (data.go: striped RADOS
// objects named by a random data id), the garbage collector (gc.go) and
// the bucket check comparing indexes with data (check.go).
//
// Signatures are checked by internal/s3gw/sigv4; users, buckets, index
// entries, uploads and the garbage list are internal/s3gw/meta's. Each
// bucket's index is a kv store (object name -> entry), so a bucket grows
// without resharding and lists in key order.
//
// Start at [New] and [Gateway.ServeHTTP]. docs/S3.md says what is
// supported.
//
// # Concurrency
//
// A Gateway serves any number of requests at once. Several gateways may
// serve the same pool: everything they agree on is in RADOS.
package s3gw

// Package meta owns the S3 gateway's records in RADOS and their
// encodings: users and their access keys, buckets, owners and ACLs
// (acl.go; checked by s3gw), tag sets (tags.go), CORS rules (cors.go;
// validated and applied by s3gw), checksums (checksum.go), ownership
// controls and public access blocks (ownership.go), lifecycle rules and
// the lease of each bucket's lifecycle pass (lifecycle.go; validated and
// carried out by s3gw), each bucket's object
// index (a kv store: object name -> [Entry], and the object's versions
// under name\x00id: versions.go), multipart uploads and their
// parts, and the garbage list of data that an overwrite, a delete or a
// crash leaves behind.
//
// Everything lives in one pool (the gateway's, ".cuttle.s3" by default),
// so every gateway of a cluster sees the same users and buckets: a name
// is taken by an exclusive create, never by a gateway's memory.
//
//	s3.users                 omap: user name -> ""
//	s3.user.<name>           xattr s3.user: the User; omap: bucket -> ""
//	s3.key.<access key>      xattr s3.key: the owner's name (exclusive create)
//	s3.bucket.<name>         xattr s3.bucket: the Bucket (exclusive create)
//	kv.b.<bucket id>.*       the bucket's index (package kv)
//	s3.uploads.<bucket id>   omap: "<key>\x00<upload id>" -> Upload
//	s3.parts.<upload id>     omap: "%05d" part number -> Part
//	s3.gc.<id % 32, %02d>    omap: "%016x" data id -> Garbage
//	s3.lc.<bucket id>        xattr s3.lc: the LifecycleLease (compare-and-write)
//
// It must not know HTTP or S3's XML: internal/s3gw turns its errors
// into S3 codes. Data bytes are not here either: they are striped objects
// named by a data id (s3gw's data.go).
//
// # Concurrency
//
// A Store is safe for concurrent use; so is an Index. Races between
// gateways are settled in RADOS (exclusive creates, one-object atomic
// writes), and docs/S3.md says what each operation guarantees.
package meta

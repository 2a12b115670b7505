// Package version is the version object class: an application-managed
// version number on an object, as Ceph's cls_version keeps one for its
// gateways, so that a client can guard a write on it in the same request
// (version.check, then the write). The number is stored in the user
// attribute "version" as 8 little-endian bytes. Methods, each taking and
// returning 8 bytes (Encode) where they take or return a number:
//
//	version.read   -> the version (0 if never set)
//	version.set    N -> nothing
//	version.inc    -> the new version
//	version.check  N -> nothing; ECANCELED unless the version equals N
//
// The package knows objclass's contract and nothing of the OSD. Its
// methods keep no state between calls; Register before the registry is
// shared.
package version

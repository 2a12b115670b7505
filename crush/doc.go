// Package crush implements CRUSH, the placement function of Ceph (Weil et al.,
// "CRUSH: Controlled, Scalable, Decentralized Placement of Replicated Data",
// SC 2006), bit-compatible with Ceph's implementation: for the same map, rule,
// input and reweight vector, Map.DoRule returns exactly what Ceph's
// crush_do_rule returns.
//
// The package owns the map model (devices, bucket types, buckets with their
// five selection algorithms, rules, tunables, device classes with their
// shadow trees, and choose_args weight sets), the mapper, the named tunable
// profiles, a builder for common hierarchies and Cuttle's versioned binary
// encoding of a map. It knows nothing of pools, placement groups or OSD
// states: those belong to package osdmap, which feeds DoRule its input and
// its reweight vector. The text form Ceph's crushtool prints lives in
// crush/crushtext.
//
// A Map is built once from a Spec with New and is read-only afterwards, so
// any number of goroutines may map with it at once. Each goroutine brings its
// own Workspace; DoRule allocates nothing once the workspace has grown to the
// rule's result size.
//
// Start reading at Spec (spec.go) and Map.DoRule (mapper.go).
package crush

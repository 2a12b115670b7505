//go:build !race

package rawio

// ReleaseIO marks what the calling goroutine did so far as visible to
// goroutines that read the bytes it is about to write (AcquireIO). It
// matters only to the race detector: a no-op in other builds.
func ReleaseIO() {}

// AcquireIO marks what writers did before their writes (ReleaseIO) as
// visible to the calling goroutine, which has read their bytes. A no-op
// outside race-detector builds.
func AcquireIO() {}

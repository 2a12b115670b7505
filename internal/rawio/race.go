//go:build race

package rawio

import "sync/atomic"

// ioSync stands, in race-detector builds only, for the ordering the
// kernel gives between writing bytes to a socket and reading them: the
// syscall package's Read and Write tell the detector about it, raw calls
// do not. Without it the detector would report the handing over of data
// through a socket as a race.
var ioSync atomic.Uint64

// ReleaseIO marks what the calling goroutine did so far as visible to
// goroutines that read the bytes it is about to write (AcquireIO).
func ReleaseIO() { ioSync.Add(1) }

// AcquireIO marks what writers did before their writes (ReleaseIO) as
// visible to the calling goroutine, which has read their bytes.
func AcquireIO() { ioSync.Load() }

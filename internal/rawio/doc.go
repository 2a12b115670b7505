// Package rawio holds the helpers of the I/O paths that issue raw system
// calls (syscall.RawSyscall), which the Go runtime does not treat as
// blocking: vectors of buffers for writev and pwritev, and resuming them
// after a short write. The callers own the reasons for raw calls, which
// are only right for calls that do not wait in the kernel (non-blocking
// sockets, writes to the page cache): an ordinary call that follows an
// idle spell wakes the runtime's monitor thread, and one that outlasts
// its 20 µs poll has its P handed to another thread.
package rawio

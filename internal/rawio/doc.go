// Package rawio owns the raw system calls (syscall.RawSyscall) of the
// I/O paths, which the Go runtime does not treat as blocking: reading a
// non-blocking descriptor through its RawConn (Reader), appending and
// pwritev-ing into the page cache (Append, Pwritev), and the vectors of
// buffers writev and pwritev take, resumed after a short write. The
// callers own the reasons for raw calls, which are only right for calls
// that do not wait in the kernel: an ordinary call that follows an idle
// spell wakes the runtime's monitor thread, and one that outlasts its
// 20 µs poll has its P handed to another thread.
package rawio

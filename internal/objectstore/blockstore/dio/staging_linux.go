package dio

import (
	"syscall"
	"unsafe"

	"github.com/cuttlestore/cuttle/internal/bufpool"
)

const hugePage = bufpool.HugePage

// mapStaging maps an anonymous region with room for a StagingSize buffer
// on hugePage boundaries and asks for transparent huge pages; it returns
// the mapping and the buffer (nil, nil if mapping fails). Without huge
// pages the buffer still works, as fast as a Go buffer.
func mapStaging() (mapping, buf []byte) {
	m, err := syscall.Mmap(-1, 0, StagingSize+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil
	}
	skip := 0
	if r := int(uintptr(unsafe.Pointer(&m[0])) % hugePage); r != 0 {
		skip = hugePage - r
	}
	buf = m[skip : skip+StagingSize : skip+StagingSize]
	const madvHugepage = 14
	_ = syscall.Madvise(buf, madvHugepage) // best effort
	return m, buf
}

func unmapStaging(m []byte) { _ = syscall.Munmap(m) }

// MapMemory returns n bytes of zeroed memory mapped outside the Go heap
// (the collector neither scans nor counts it) and the mapping that holds
// it; nil, nil if mapping failed. Each page costs a fault the first time
// it is written (about 0.7 ms of system time per MiB here); asking for
// transparent huge pages made that cost vary fourfold with the memory's
// fragmentation, so the pages stay small. Release the mapping with
// UnmapMemory once nothing uses the memory.
func MapMemory(n int) (mapping, buf []byte) {
	m, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil
	}
	return m, m
}

// UnmapMemory releases a mapping from MapMemory.
func UnmapMemory(m []byte) { _ = syscall.Munmap(m) }

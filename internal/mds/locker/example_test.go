package locker_test

import (
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
)

// A reader caches a file; a writer opens it, so the reader's cache is
// revoked and, once the reader acks, the writer may write: both now do
// synchronous I/O (the file lock is in mix).
func Example() {
	l := locker.New(0, locker.Config{})
	now := time.Unix(1000, 0)
	const ino locker.Ino = 0x10000000000

	for _, a := range l.Open(1, 1, ino, locker.OpenRead, now) {
		fmt.Println(a)
	}
	for _, a := range l.Open(2, 2, ino, locker.OpenWrite, now) {
		fmt.Println(a)
	}
	reader, _ := l.Cap(ino, 1)
	for _, a := range l.Ack(1, ino, reader.ID, reader.Seq, nil, now) {
		fmt.Println(a)
	}
	state, _ := l.LockState(ino, locker.LockFile)
	fmt.Println("file lock:", state)
	// Output:
	// reply req 1 client.1 ino 0x10000000000 size 0 mtime -62135596800 caps pAsLsXsFscr seq 1
	// revoke client.1 ino 0x10000000000 Fsc to pAsLsXsFr seq 2
	// reply req 2 client.2 ino 0x10000000000 size 0 mtime -62135596800 caps pAsLsXs seq 1
	// grant client.2 ino 0x10000000000 pAsLsXsFw seq 2
	// file lock: mix
}

package bufpool

import "testing"

// A trim lets go of as many buffers as stayed idle since the trim before
// it, keeps those that were taken in between, and ends the trimmer once
// nothing is left.
func TestTrimDropsIdleBuffers(t *testing.T) {
	var l FreeList
	const size, maxIdle = 1 << 20, 64 << 20
	get := func() []byte {
		if b := l.Get(size); b != nil {
			return b
		}
		return make([]byte, size)
	}
	idle := func() int { n, _ := l.Idle(); return n }
	held := [][]byte{get(), get(), get(), get()}
	if !l.Put(held[0], maxIdle) {
		t.Fatal("the first buffer back did not start a trimmer")
	}
	for _, b := range held[1:] {
		if l.Put(b, maxIdle) {
			t.Fatal("a second trimmer started")
		}
	}
	// Only the first buffer was idle since the trimmer started.
	if !l.Trim() || idle() != 3*size {
		t.Fatalf("after the first trim %d bytes idle, want %d", idle(), 3*size)
	}
	l.Put(get(), maxIdle) // taken and back: the fewest idle were 2
	if !l.Trim() || idle() != size {
		t.Fatalf("after the second trim %d bytes idle, want %d", idle(), size)
	}
	if l.Trim() || idle() != 0 {
		t.Fatalf("after the third trim %d bytes idle; want none", idle())
	}
	if _, trimming := l.Idle(); trimming {
		t.Fatal("the trimmer goes on with nothing left")
	}
	if !l.Put(get(), maxIdle) {
		t.Fatal("a buffer back in an emptied pool did not start a trimmer")
	}
}

// Put keeps buffers only up to maxIdle bytes, and Get hands back the one
// put last in a capacity, with its contents.
func TestPutBoundsAndGetReuses(t *testing.T) {
	var l FreeList
	b := make([]byte, 10, 16)
	b[0] = 42
	l.Put(b, 32)
	l.Put(make([]byte, 16), 32)
	l.Put(make([]byte, 16), 32) // past the bound
	if n, _ := l.Idle(); n != 32 {
		t.Fatalf("%d bytes idle, want 32", n)
	}
	l.Get(16)
	if got := l.Get(16); len(got) != 16 || &got[0] != &b[0] || got[0] != 42 {
		t.Fatal("the first buffer put did not come back whole")
	}
	if l.Get(16) != nil || l.Get(8) != nil {
		t.Fatal("an empty capacity handed out a buffer")
	}
}

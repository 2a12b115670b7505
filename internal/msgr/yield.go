package msgr

// A sendYield decides whether a connection's writer, woken to send,
// first yields its processor once (runtime.Gosched) so that goroutines
// made runnable by the same event (a batch of replies that completes
// several requests, several ops readied at once) can queue their
// messages first and share its writev. A writev on loopback TCP costs
// about 8 µs of CPU however little it carries, since it also runs the
// receiver's TCP input and wakes its reader: under 4 KiB reads, 16 in
// flight, yielding cut the CPU per read by 10-20% in every process and
// raised the reads by 11-20% (docs/benchmarks/2026-11-27.md, "Session 24").
//
// When nobody else has anything to send, the yield only delays the
// message: at one op in flight, writes took 10% longer. So the writer
// keeps yielding only while yields bring more messages, and otherwise
// tries one wake in yieldProbe.
//
// Only the connection's writeLoop uses it.
type sendYield struct {
	score int  // 0..maxYieldScore: how much recent yields gained
	wakes uint // wakes seen, for the probes
}

const (
	maxYieldScore = 8
	yieldProbe    = 16
)

// should reports whether to yield at this wake.
func (y *sendYield) should() bool {
	y.wakes++
	return y.score > 0 || y.wakes%yieldProbe == 0
}

// record notes whether a yield found more messages queued after it than
// before.
func (y *sendYield) record(gained bool) {
	switch {
	case gained:
		y.score = min(y.score+2, maxYieldScore)
	case y.score > 0:
		y.score--
	}
}

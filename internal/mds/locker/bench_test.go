package locker

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkSharedFile measures the events on a file many clients have
// open: each op is one writer opening it (every reader's cache revoked),
// the readers' acks, and the writer's close (the readers' caches granted
// back).
func BenchmarkSharedFile(b *testing.B) {
	for _, readers := range []int{10, 100, 1000} {
		b.Run(strconv.Itoa(readers), func(b *testing.B) {
			l := New(0, Config{})
			for c := range readers {
				l.Open(ReqID(c+1), ClientID(c+1), ino, OpenRead, t0)
			}
			writer := ClientID(readers + 1)
			b.ResetTimer()
			for i := range b.N {
				now := t0.Add(time.Duration(i) * time.Second)
				l.Open(ReqID(i), writer, ino, OpenWrite, now)
				for c := range readers {
					cp, _ := l.Cap(ino, ClientID(c+1))
					l.Ack(ClientID(c+1), ino, cp.ID, cp.Seq, nil, now)
				}
				cp, _ := l.Cap(ino, writer)
				l.Release(writer, ino, cp.ID, cp.IssueSeq, nil, now)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(readers+2)), "ns/event")
		})
	}
}

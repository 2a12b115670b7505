package pglog

import (
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// TestVerifyFindsCorruption damages a log the way a bug in Append, the
// trims or the arena's compaction would, and checks that verify names the
// damage, and verifyEnds (which the invariants build runs after every
// change) too where the damage is at an end.
func TestVerifyFindsCorruption(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(l *Log)
		want    string
		atEnd   bool
	}{
		{"tail not older", func(l *Log) { l.tail = l.entries[0].version }, "tail", true},
		{"newest out of order", func(l *Log) { l.entries[len(l.entries)-1].version = l.entries[0].version }, "version order", true},
		{"middle out of order", func(l *Log) { l.entries[2].version = l.entries[1].version }, "version order", false},
		{"strings compacted away", func(l *Log) { l.arenaBase = l.entries[0].at + 1 }, "arena", true},
		{"arena not ended by the newest", func(l *Log) { l.arena = append(l.arena, 'x') }, "arena", true},
		{"strings not contiguous", func(l *Log) { l.entries[2].at++ }, "strings", false},
		{"request id of a trimmed entry", func(l *Log) {
			l.byReq[l.packedKey(&l.entries[0])] = l.trimmed - 1
		}, "outside the log", false},
		{"request id of another entry", func(l *Log) {
			l.byReq[l.packedKey(&l.entries[1])] = l.trimmed + 2
		}, "another request", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLog(wire.Version{Epoch: 1})
			for i := range 6 {
				e := Entry{Version: wire.Version{Epoch: 2, Counter: uint64(i + 1)}, Kind: Modify,
					Object: objid.New(1, "", "", "obj"+strings.Repeat("x", i), 0),
					Req:    wire.ReqID{Client: "client.1", Incarnation: 1, Tid: uint64(i + 1)}}
				if err := l.Append(e); err != nil {
					t.Fatal(err)
				}
			}
			l.TrimTo(5)
			if err := l.verify(); err != nil {
				t.Fatalf("before the damage: %v", err)
			}
			tt.corrupt(l)
			if err := l.verify(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("verify() = %v; want an error mentioning %q", err, tt.want)
			}
			if err := l.verifyEnds(); (err != nil) != tt.atEnd {
				t.Errorf("verifyEnds() = %v; want an error: %v", err, tt.atEnd)
			}
		})
	}
}

package reserve

import (
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/osdmap"
)

func pg(seed uint32) osdmap.PG { return osdmap.PG{Pool: 1, Seed: seed} }

// TestRemote walks a member with one slot through the protocol: primaries
// of several PGs ask, the member grants in priority order, repeats a
// grant a primary asks for again, ignores stale requests and releases,
// lets a newer interval replace an older one, and drops the reservations
// of intervals that ended (a primary that died) when a map says so.
func TestRemote(t *testing.T) {
	type ev struct {
		op       string // request, release, prune (keep: the PGs whose interval goes on), limit
		pg       uint32
		from     int32
		interval uint64
		prio     int
		keep     []uint32
		want     []Grant
		dropped  []uint32
	}
	g := func(to int32, seed uint32, interval uint64) Grant {
		return Grant{To: to, PG: pg(seed), Interval: interval}
	}
	for _, tc := range []struct {
		name  string
		limit int
		evs   []ev
		held  int
	}{
		{"grants, queues and hands the slot on at release", 1, []ev{
			{op: "request", pg: 1, from: 0, interval: 10, prio: 180, want: []Grant{g(0, 1, 10)}},
			{op: "request", pg: 2, from: 3, interval: 12, prio: 100},
			{op: "request", pg: 3, from: 4, interval: 11, prio: 180},
			{op: "release", pg: 1, from: 0, interval: 10, want: []Grant{g(4, 3, 11)}},
			{op: "release", pg: 3, from: 4, interval: 11, want: []Grant{g(3, 2, 12)}},
		}, 1},
		{"a repeated request is granted again, once held", 1, []ev{
			{op: "request", pg: 1, from: 0, interval: 10, prio: 180, want: []Grant{g(0, 1, 10)}},
			{op: "request", pg: 2, from: 3, interval: 12, prio: 100},
			{op: "request", pg: 1, from: 0, interval: 10, prio: 180, want: []Grant{g(0, 1, 10)}},
			{op: "request", pg: 2, from: 3, interval: 12, prio: 100},
		}, 1},
		{"stale requests and releases are ignored", 1, []ev{
			{op: "request", pg: 1, from: 0, interval: 10, prio: 180, want: []Grant{g(0, 1, 10)}},
			{op: "request", pg: 1, from: 2, interval: 8, prio: 180},
			{op: "release", pg: 1, from: 0, interval: 9},
			{op: "release", pg: 1, from: 2, interval: 10},
			{op: "request", pg: 2, from: 3, interval: 12, prio: 100},
		}, 1},
		{"a newer interval replaces the held reservation", 1, []ev{
			{op: "request", pg: 1, from: 0, interval: 10, prio: 180, want: []Grant{g(0, 1, 10)}},
			{op: "request", pg: 2, from: 3, interval: 12, prio: 180},
			// pg 1's new primary asks: the old reservation ends, pg 2
			// (waiting first) gets the slot, pg 1's new request waits.
			{op: "request", pg: 1, from: 5, interval: 14, prio: 180, want: []Grant{g(3, 2, 12)}},
			{op: "release", pg: 1, from: 0, interval: 10},
			{op: "release", pg: 2, from: 3, interval: 12, want: []Grant{g(5, 1, 14)}},
		}, 1},
		{"a dead primary's reservations go with the map", 2, []ev{
			{op: "request", pg: 1, from: 0, interval: 10, prio: 180, want: []Grant{g(0, 1, 10)}},
			{op: "request", pg: 2, from: 0, interval: 10, prio: 180, want: []Grant{g(0, 2, 10)}},
			{op: "request", pg: 3, from: 4, interval: 11, prio: 100},
			{op: "request", pg: 4, from: 0, interval: 10, prio: 100},
			// osd.0 died: pgs 1, 2 and 4 start new intervals.
			{op: "prune", keep: []uint32{3}, dropped: []uint32{1, 2, 4}, want: []Grant{g(4, 3, 11)}},
		}, 1},
		{"a raised limit grants at once", 1, []ev{
			{op: "request", pg: 1, from: 0, interval: 10, prio: 180, want: []Grant{g(0, 1, 10)}},
			{op: "request", pg: 2, from: 3, interval: 12, prio: 100},
			{op: "request", pg: 3, from: 4, interval: 11, prio: 140},
			{op: "limit", prio: 3, want: []Grant{g(4, 3, 11), g(3, 2, 12)}},
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewRemote(tc.limit)
			for i, e := range tc.evs {
				var got []Grant
				var dropped []Request
				switch e.op {
				case "request":
					got = m.Request(Request{PG: pg(e.pg), From: e.from, Interval: e.interval, Priority: e.prio})
				case "release":
					got = m.Release(pg(e.pg), e.from, e.interval)
				case "prune":
					dropped, got = m.Prune(func(q Request) bool { return slices.Contains(e.keep, q.PG.Seed) })
				case "limit":
					got = m.SetLimit(e.prio)
				}
				if len(got) == 0 {
					got = nil
				}
				if !slices.Equal(got, e.want) {
					t.Fatalf("event %d (%s pg %d from %d interval %d): grants %v, want %v", i, e.op, e.pg, e.from, e.interval, got, e.want)
				}
				var seeds []uint32
				for _, q := range dropped {
					seeds = append(seeds, q.PG.Seed)
				}
				if !slices.Equal(seeds, e.dropped) {
					t.Fatalf("event %d: dropped %v, want %v", i, seeds, e.dropped)
				}
			}
			if st := m.State(); st.Held != tc.held || st.MaxHeld > max(st.Limit, tc.limit) {
				t.Fatalf("state %+v, want %d held, never more than the limit", st, tc.held)
			}
		})
	}
}

func TestRemoteHolds(t *testing.T) {
	m := NewRemote(1)
	m.Request(Request{PG: pg(1), From: 2, Interval: 7, Priority: 180})
	m.Request(Request{PG: pg(2), From: 3, Interval: 7, Priority: 180})
	if q, held := m.Holds(pg(1)); !held || q.From != 2 {
		t.Fatalf("pg 1: %+v held %v, want held for osd.2", q, held)
	}
	if q, held := m.Holds(pg(2)); held || q.From != 3 {
		t.Fatalf("pg 2: %+v held %v, want waiting for osd.3", q, held)
	}
	if _, held := m.Holds(pg(9)); held {
		t.Fatal("an unknown PG holds a slot")
	}
}

func TestRemoteEntries(t *testing.T) {
	m := NewRemote(2)
	m.Request(Request{PG: pg(5), From: 2, Interval: 7, Priority: 100})
	m.Request(Request{PG: pg(1), From: 3, Interval: 7, Priority: 100})
	m.Request(Request{PG: pg(4), From: 3, Interval: 7, Priority: 100})
	m.Request(Request{PG: pg(9), From: 4, Interval: 7, Priority: 180})
	var got []uint32
	var held []bool
	for _, e := range m.Entries() {
		got = append(got, e.PG.Seed)
		held = append(held, e.Held)
	}
	if !slices.Equal(got, []uint32{1, 5, 9, 4}) || !slices.Equal(held, []bool{true, true, false, false}) {
		t.Fatalf("entries %v held %v; want [1 5 9 4] (held first, by PG; then by priority) [true true false false]", got, held)
	}
}

package replication

import (
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/osdmap"
)

const eio, enospc = -5, -28

// ack is one ack fed to a tracker and the outcome it must give.
type ack struct {
	osd    int32
	stage  Stage
	result int32
	want   Outcome
}

func TestAcks(t *testing.T) {
	acting := []int32{3, 1, 7} // osd.3 is the primary
	for _, tc := range []struct {
		name        string
		wantApplied bool
		acks        []ack
		result      int32
	}{
		{"all ack in order, applied wanted", true, []ack{
			{3, Applied, 0, Nothing}, {1, Applied, 0, Nothing}, {7, Applied, 0, AppliedAll},
			{1, Committed, 0, Nothing}, {3, Committed, 0, Nothing}, {7, Committed, 0, CommittedAll},
		}, 0},
		{"all ack in order, applied not wanted", false, []ack{
			{3, Applied, 0, Nothing}, {1, Applied, 0, Nothing}, {7, Applied, 0, Nothing},
			{1, Committed, 0, Nothing}, {3, Committed, 0, Nothing}, {7, Committed, 0, CommittedAll},
		}, 0},
		{"a replica commits before it applies", true, []ack{
			{3, Applied, 0, Nothing}, {1, Committed, 0, Nothing}, {7, Applied, 0, AppliedAll},
			{1, Applied, 0, Nothing}, {3, Committed, 0, Nothing}, {7, Committed, 0, CommittedAll},
		}, 0},
		{"the last apply comes with the last commit", true, []ack{
			{3, Applied, 0, Nothing}, {1, Committed, 0, Nothing}, {3, Committed, 0, Nothing},
			{7, Committed, 0, CommittedAll},
		}, 0},
		{"a replica fails", true, []ack{
			{3, Applied, 0, Nothing}, {1, Committed, eio, Nothing}, {7, Applied, 0, Nothing},
			{3, Committed, 0, Nothing}, {7, Committed, 0, CommittedAll},
		}, eio},
		{"a replica fails without applying", true, []ack{
			{3, Applied, 0, Nothing}, {1, Failed, eio, Nothing}, {7, Applied, 0, Nothing},
			{3, Committed, 0, Nothing}, {7, Committed, 0, Nothing}, {1, Committed, 0, CommittedAll},
		}, eio},
		{"the local store fails to commit", true, []ack{
			{3, Applied, 0, Nothing}, {1, Applied, 0, Nothing}, {7, Applied, 0, AppliedAll},
			{1, Committed, 0, Nothing}, {7, Committed, 0, Nothing}, {3, Committed, enospc, CommittedAll},
		}, enospc},
		{"the first failure is the result", false, []ack{
			{1, Committed, enospc, Nothing}, {7, Committed, eio, Nothing}, {3, Committed, 0, CommittedAll},
		}, enospc},
		{"duplicate acks", true, []ack{
			{3, Applied, 0, Nothing}, {3, Applied, 0, Nothing}, {1, Committed, 0, Nothing},
			{1, Committed, 0, Nothing}, {7, Applied, 0, AppliedAll}, {7, Applied, 0, Nothing},
			{3, Committed, 0, Nothing}, {7, Committed, 0, CommittedAll}, {7, Committed, 0, Nothing},
			{1, Committed, 0, Nothing},
		}, 0},
		{"an ack from an OSD not in the acting set", true, []ack{
			{3, Applied, 0, Nothing}, {4, Committed, 0, Nothing}, {1, Applied, 0, Nothing},
			{7, Applied, 0, AppliedAll}, {3, Committed, 0, Nothing}, {4, Committed, eio, Nothing},
			{1, Committed, 0, Nothing}, {7, Committed, 0, CommittedAll},
		}, eio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Acks
			a.Start(acting, tc.wantApplied)
			for i, k := range tc.acks {
				if got := a.Ack(k.osd, k.stage, k.result); got != k.want {
					t.Fatalf("ack %d (osd.%d stage %d result %d): outcome %d, want %d", i, k.osd, k.stage, k.result, got, k.want)
				}
			}
			if a.Result() != tc.result {
				t.Errorf("result %d, want %d", a.Result(), tc.result)
			}
			if a.Unapplied() != 0 || a.Uncommitted() != 0 {
				t.Errorf("unapplied %d, uncommitted %d after every member committed", a.Unapplied(), a.Uncommitted())
			}
		})
	}
}

// The counts follow the acks, and Start forgets the previous write.
func TestAcksCounts(t *testing.T) {
	var a Acks
	a.Start([]int32{0, 1}, false)
	a.Ack(0, Failed, eio)
	a.Start([]int32{5, 6, 2}, false)
	if a.Unapplied() != 3 || a.Uncommitted() != 3 || a.Result() != 0 {
		t.Fatalf("after Start: unapplied %d, uncommitted %d, result %d", a.Unapplied(), a.Uncommitted(), a.Result())
	}
	a.Ack(6, Applied, 0)
	a.Ack(2, Committed, 0)
	if a.Unapplied() != 1 || a.Uncommitted() != 2 {
		t.Fatalf("unapplied %d, uncommitted %d, want 1 and 2", a.Unapplied(), a.Uncommitted())
	}
}

// Acting sets past the inline members, up to the largest a map allows.
func TestAcksLargeActingSets(t *testing.T) {
	if osdmap.MaxPoolSize > MaxMembers {
		t.Fatalf("osdmap.MaxPoolSize %d is over MaxMembers %d", osdmap.MaxPoolSize, MaxMembers)
	}
	for _, n := range []int{1, inlineMembers, inlineMembers + 1, MaxMembers} {
		acting := make([]int32, n)
		for i := range acting {
			acting[i] = int32(100 - i)
		}
		var a Acks
		a.Start(acting, true)
		acting[0] = -1 // Start keeps no reference
		order := slices.Clone(acting)
		order[0] = 100
		slices.Reverse(order)
		for i, osd := range order {
			want := Nothing
			if i == n-1 {
				want = AppliedAll
			}
			if got := a.Ack(osd, Applied, 0); got != want {
				t.Fatalf("%d members: apply %d outcome %d, want %d", n, i, got, want)
			}
		}
		for i, osd := range order {
			want := Nothing
			if i == n-1 {
				want = CommittedAll
			}
			if got := a.Ack(osd, Committed, 0); got != want {
				t.Fatalf("%d members: commit %d outcome %d, want %d", n, i, got, want)
			}
		}
	}
}

// An acting set may repeat a member: its acks count for every place it
// holds, and the write still completes.
func TestAcksRepeatedMember(t *testing.T) {
	var a Acks
	a.Start([]int32{3, 1, 3, 2}, true)
	for _, k := range []ack{
		{3, Applied, 0, Nothing}, {7, Applied, 0, Nothing}, {1, Applied, 0, Nothing}, {2, Applied, 0, AppliedAll},
		{3, Committed, 0, Nothing}, {1, Committed, 0, Nothing}, {2, Committed, 0, CommittedAll},
	} {
		if got := a.Ack(k.osd, k.stage, k.result); got != k.want {
			t.Fatalf("osd.%d stage %d: outcome %d, want %d", k.osd, k.stage, got, k.want)
		}
	}
}

// In ack primary mode (AnswerOn) the primary's commit answers the
// clients, with its result alone; the write is tracked until every
// member committed, and Committed tells who lags.
func TestAcksAnswerOnPrimary(t *testing.T) {
	acting := []int32{3, 1, 7} // osd.3 is the primary
	for _, tc := range []struct {
		name        string
		wantApplied bool
		acks        []ack
		result      int32
	}{
		{"the primary commits first", true, []ack{
			{3, Applied, 0, AppliedAll}, {1, Applied, 0, Nothing}, {3, Committed, 0, Answer},
			{1, Committed, 0, Nothing}, {7, Committed, 0, CommittedAll},
		}, 0},
		{"applied not wanted", false, []ack{
			{3, Applied, 0, Nothing}, {3, Committed, 0, Answer}, {7, Committed, 0, Nothing}, {1, Committed, 0, CommittedAll},
		}, 0},
		{"the replicas commit before the primary", true, []ack{
			{1, Committed, 0, Nothing}, {3, Applied, 0, AppliedAll}, {7, Committed, 0, Nothing},
			{3, Committed, 0, CommittedAll},
		}, 0},
		{"a replica's failure is not the answer's", false, []ack{
			{1, Committed, eio, Nothing}, {3, Committed, 0, Answer}, {7, Committed, 0, CommittedAll},
		}, 0},
		{"the primary's failure is", true, []ack{
			{3, Applied, 0, AppliedAll}, {3, Committed, enospc, Answer}, {1, Committed, 0, Nothing}, {7, Committed, 0, CommittedAll},
		}, enospc},
		{"repeated acks answer once", false, []ack{
			{3, Committed, 0, Answer}, {3, Committed, 0, Nothing}, {1, Committed, 0, Nothing},
			{7, Committed, 0, CommittedAll}, {7, Committed, 0, Nothing},
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Acks
			a.Start(acting, tc.wantApplied)
			a.AnswerOn(3)
			for i, k := range tc.acks {
				if got := a.Ack(k.osd, k.stage, k.result); got != k.want {
					t.Fatalf("ack %d (osd.%d stage %d result %d): outcome %d, want %d", i, k.osd, k.stage, k.result, got, k.want)
				}
			}
			if a.Result() != tc.result {
				t.Errorf("result %d, want %d", a.Result(), tc.result)
			}
		})
	}
}

func TestAcksCommittedAndAnswered(t *testing.T) {
	var a Acks
	a.Start([]int32{3, 1, 7}, false)
	a.AnswerOn(3)
	if a.Committed(3) || a.Committed(1) || a.Committed(9) || a.Answered() {
		t.Fatal("a new write is committed somewhere or answered")
	}
	a.Ack(3, Committed, 0)
	a.Ack(7, Committed, 0)
	if !a.Committed(3) || !a.Committed(7) || a.Committed(1) || !a.Answered() {
		t.Fatalf("after the primary's and osd.7's commits: 3 %v 7 %v 1 %v answered %v",
			a.Committed(3), a.Committed(7), a.Committed(1), a.Answered())
	}
	// Without AnswerOn nothing is answered before the end.
	a.Start([]int32{3, 1}, false)
	if a.Ack(3, Committed, 0) != Nothing || a.Answered() {
		t.Fatal("ack all answered on the primary's commit")
	}
	// A primary alone (size 1) answers with CommittedAll.
	a.Start([]int32{3}, false)
	a.AnswerOn(3)
	if got := a.Ack(3, Committed, 0); got != CommittedAll || a.Answered() {
		t.Fatalf("a lone primary's commit: %d answered %v, want CommittedAll", got, a.Answered())
	}
}

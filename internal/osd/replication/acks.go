package replication

import "math/bits"

// MaxMembers is the most members an acting set given to Acks.Start may
// have (osdmap.MaxPoolSize bounds every acting set at 64).
const MaxMembers = 64

// inlineMembers is how many members Acks holds without allocating.
const inlineMembers = 8

// Stage is how far a member got with a write.
type Stage uint8

const (
	// Failed reports a result only: the member neither applied nor
	// committed the write.
	Failed Stage = iota
	// Applied means the member applied the write: reads see it.
	Applied
	// Committed means the member made the write durable; it implies
	// Applied.
	Committed
)

// Outcome is what an ack changed for the write's clients.
type Outcome uint8

const (
	// Nothing is to be answered yet.
	Nothing Outcome = iota
	// AppliedAll: every member has applied the write now, none failed,
	// and it was started wanting the applied reply; send the applied
	// reply to the clients that asked for it.
	AppliedAll
	// CommittedAll: every member has committed the write now; send every
	// client the final reply with Result, unless Answer was given
	// before (AnswerOn). The write is done: later acks return Nothing.
	CommittedAll
	// Answer (AnswerOn only): the member the clients wait for has
	// committed the write now and some other member has not; send every
	// client the final reply with Result. The write goes on: the last
	// commit still gives CommittedAll.
	Answer
)

// Acks tracks one replicated write on its primary: the members of the
// acting set that have yet to apply it and to commit it, and the first
// failure reported. The zero Acks has no members; Start begins a write.
type Acks struct {
	inline      [inlineMembers]int32
	more        []int32 // the members when there are more than inlineMembers
	n           uint8   // how many members
	unapplied   uint64  // bit i: member i has yet to apply
	uncommitted uint64  // bit i: member i has yet to commit
	result      int32   // the first failure reported, or 0
	wantApplied bool
	// answerBits, when not 0, are the places of the member whose commit
	// answers the clients (AnswerOn); answered is set once it has.
	answerBits uint64
	answered   bool
}

// Start begins tracking a write replicated to the acting set acting
// (the primary among them); wantApplied is whether the write sends an
// applied reply before the final one. acting must have at most
// MaxMembers members; Start does not keep it.
func (a *Acks) Start(acting []int32, wantApplied bool) {
	if len(acting) > MaxMembers {
		panic("replication: acting set over MaxMembers")
	}
	*a = Acks{n: uint8(len(acting)), wantApplied: wantApplied}
	if len(acting) <= inlineMembers {
		copy(a.inline[:], acting)
	} else {
		a.more = append([]int32(nil), acting...)
	}
	all := uint64(1)<<len(acting) - 1 // all ones for 64: a shift past the width gives 0
	a.unapplied, a.uncommitted = all, all
}

// AnswerOn makes the clients' answers wait for osd alone (a pool in ack
// primary: osd is the primary): the applied reply once it has applied
// the write, the final one (Answer) once it has committed it, with its
// result; the other members' failures are left to recovery and change
// no answer. The write is done, as before, once every member has
// committed it (CommittedAll). An OSD not in the acting set changes
// nothing. Call it after Start.
func (a *Acks) AnswerOn(osd int32) { a.answerBits = a.bits(osd) }

// Answered reports whether the clients were answered before every
// member committed (the Answer outcome was given).
func (a *Acks) Answered() bool { return a.answered }

// Committed reports whether osd has committed the write (every place it
// holds in the acting set, for a repeated member); false for an OSD not
// in the acting set.
func (a *Acks) Committed(osd int32) bool {
	b := a.bits(osd)
	return b != 0 && a.uncommitted&b == 0
}

// members returns the acting set.
func (a *Acks) members() []int32 {
	if a.more != nil {
		return a.more
	}
	return a.inline[:a.n]
}

// bits returns the bits of osd's places in the acting set: none for an
// OSD not in it, several for one it repeats (an acting set with a
// repeated member must still complete).
func (a *Acks) bits(osd int32) uint64 {
	var b uint64
	for i, m := range a.members() {
		if m == osd {
			b |= 1 << i
		}
	}
	return b
}

// Ack records that osd reached stage with the write, result being
// non-zero (a negative errno) if it failed, and returns what that
// changed for the clients. The first non-zero result is the write's;
// an ack repeated, or from an OSD not in the acting set, changes no
// member's stage (its result is recorded all the same, as the primary
// always did).
func (a *Acks) Ack(osd int32, stage Stage, result int32) Outcome {
	b := a.bits(osd)
	if result != 0 && a.result == 0 && (a.answerBits == 0 || b&a.answerBits != 0) {
		a.result = result
	}
	wasUnapplied, wasUncommitted := a.unapplied != 0, a.uncommitted != 0
	wasAnswerUnapplied := a.unapplied&a.answerBits != 0
	if stage >= Applied {
		a.unapplied &^= b
	}
	if stage == Committed {
		a.uncommitted &^= b
	}
	switch {
	case wasUncommitted && a.uncommitted == 0:
		return CommittedAll
	case a.answerBits != 0 && !a.answered && a.uncommitted&a.answerBits == 0:
		a.answered = true
		return Answer
	case a.answerBits != 0:
		if wasAnswerUnapplied && a.unapplied&a.answerBits == 0 && a.wantApplied && a.result == 0 {
			return AppliedAll
		}
		return Nothing
	case wasUnapplied && a.unapplied == 0 && a.wantApplied && a.result == 0:
		return AppliedAll
	}
	return Nothing
}

// Result is the write's result: the first failure a member reported (the
// answering member, under AnswerOn), or 0.
func (a *Acks) Result() int32 { return a.result }

// Unapplied is how many members have yet to apply the write.
func (a *Acks) Unapplied() int { return bits.OnesCount64(a.unapplied) }

// Uncommitted is how many members have yet to commit the write.
func (a *Acks) Uncommitted() int { return bits.OnesCount64(a.uncommitted) }

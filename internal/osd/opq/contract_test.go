package opq

import (
	"math/rand/v2"
	"testing"
)

// countingPolicy admits at most limit items of each class and counts, as
// a stateful (QoS) policy would, what it admitted and what ended.
type countingPolicy struct {
	limit    int
	admitted [numClasses]Load
	ended    [numClasses]Load
}

func (p *countingPolicy) Admit(c Class, cost int64, running Load) bool {
	if running.Items >= p.limit {
		return false
	}
	p.admitted[c].Items++
	p.admitted[c].Cost += cost
	return true
}

func (p *countingPolicy) Done(c Class, cost int64) {
	p.ended[c].Items++
	p.ended[c].Cost += cost
}

func (p *countingPolicy) Yields(c, other Class) bool { return Today{}.Yields(c, other) }

type tracked struct {
	key   int
	class Class
	seq   int
	cost  int64
}

// TestQueueContract runs random adds, ends and cuts under a policy that
// holds items back, and checks the rules the OSD and a QoS policy rely
// on: every item the policy admits starts at once and is the only one
// running on its key; every started item ends through Done with its
// class and cost; items of one class on one key start in the order they
// entered; a client item starts before the recovery items of its key
// that had not started when it entered, if nothing else waited there;
// running loads add up.
func TestQueueContract(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 1))
		pol := &countingPolicy{limit: 1 + rng.IntN(3)}
		q := NewQueue[int, *tracked](pol)
		running := map[int]*tracked{}
		var seq int
		lastStarted := map[[2]int]int{} // key, class -> seq of the last started
		// mustPrecede[x] lists client items that must start before x.
		mustPrecede := map[*tracked][]*tracked{}
		queued := map[int][]*tracked{} // what each key holds, not started, in order of entry
		started := map[*tracked]bool{}
		start := func(it *tracked) {
			if running[it.key] != nil {
				t.Fatalf("seed %d: %v started while %v runs on key %d", seed, it, running[it.key], it.key)
			}
			k := [2]int{it.key, int(it.class)}
			if last, ok := lastStarted[k]; ok && last > it.seq {
				t.Fatalf("seed %d: item %d of class %v on key %d started after %d", seed, it.seq, it.class, it.key, last)
			}
			for _, c := range mustPrecede[it] {
				if !started[c] {
					t.Fatalf("seed %d: recovery item %d started before client item %d of its key", seed, it.seq, c.seq)
				}
			}
			lastStarted[k] = it.seq
			running[it.key] = it
			started[it] = true
			queued[it.key] = deleteItem(queued[it.key], it)
		}
		for range 400 {
			switch n := rng.IntN(10); {
			case n < 5:
				seq++
				it := &tracked{key: rng.IntN(4), class: Classes()[rng.IntN(len(Classes()))], seq: seq, cost: int64(1 + rng.IntN(100))}
				if it.class == Client && allRecovery(queued[it.key]) {
					for _, w := range queued[it.key] {
						mustPrecede[w] = append(mustPrecede[w], it)
					}
				}
				queued[it.key] = append(queued[it.key], it)
				if q.Add(it.key, it.class, it.cost, it) {
					start(it)
				}
			case n < 9:
				key := rng.IntN(4)
				if running[key] == nil {
					continue
				}
				delete(running, key)
				if next, ok := q.Done(key); ok {
					start(next)
				}
				for q.Blocked() {
					k, it, ok := q.Next()
					if !ok {
						break
					}
					if k != it.key {
						t.Fatalf("seed %d: Next handed out key %d with an item of key %d", seed, k, it.key)
					}
					start(it)
				}
			default:
				for _, it := range q.Cut(nil) {
					if started[it] {
						t.Fatalf("seed %d: cut a started item", seed)
					}
					queued[it.key] = deleteItem(queued[it.key], it)
				}
			}
			var load [numClasses]Load
			for _, it := range running {
				load[it.class].Items++
				load[it.class].Cost += it.cost
			}
			for _, c := range Classes() {
				if q.Running(c) != load[c] {
					t.Fatalf("seed %d: class %v running %+v, want %+v", seed, c, q.Running(c), load[c])
				}
				if got := pol.admitted[c].Items - pol.ended[c].Items; got != load[c].Items {
					t.Fatalf("seed %d: class %v: the policy admitted %d more than ended, %d run", seed, c, got, load[c].Items)
				}
				if got := pol.admitted[c].Cost - pol.ended[c].Cost; got != load[c].Cost {
					t.Fatalf("seed %d: class %v: admitted cost less ended %d, running %d", seed, c, got, load[c].Cost)
				}
			}
		}
	}
}

func deleteItem(items []*tracked, it *tracked) []*tracked {
	for i, x := range items {
		if x == it {
			return append(items[:i], items[i+1:]...)
		}
	}
	return items
}

func allRecovery(items []*tracked) bool {
	for _, x := range items {
		if x.class != Recovery {
			return false
		}
	}
	return true
}

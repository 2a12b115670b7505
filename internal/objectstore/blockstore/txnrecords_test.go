package blockstore

import (
	"fmt"
	"testing"
)

// Lookups find what was added, before and after the index is built.
func TestTxnRecords(t *testing.T) {
	var r txnRecords
	states := make([]*recState, 3*txnRecordsIndexed)
	for i := range states {
		states[i] = &recState{}
		key := fmt.Sprintf("key-%d", i)
		if _, ok := r.get([]byte(key)); ok {
			t.Fatalf("%s found before it was added", key)
		}
		r.add(key, states[i])
		for j := 0; j <= i; j++ {
			if rs, ok := r.get(fmt.Appendf(nil, "key-%d", j)); !ok || rs != states[j] {
				t.Fatalf("after %d adds, key-%d: %p, %v; want %p", i+1, j, rs, ok, states[j])
			}
		}
	}
	if r.index == nil {
		t.Fatal("no index past txnRecordsIndexed entries")
	}
	if _, ok := r.get([]byte("key-x")); ok {
		t.Fatal("found a key never added")
	}
}

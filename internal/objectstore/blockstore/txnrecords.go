package blockstore

// txnRecords holds the records a transaction has looked at, by key. A
// transaction usually touches two (its object and a PG's meta object):
// a slice searched in order costs less than a map per transaction. Past
// txnRecordsIndexed entries (a PG removal, a large clone) a map indexes
// them.
type txnRecords struct {
	list  []recEntry
	index map[string]int // position in list, once it has grown
	first [2]recEntry    // list's first backing array, allocated with it
}

type recEntry struct {
	key string
	rs  *recState
}

const txnRecordsIndexed = 8

// get returns the state of the record at key, if the transaction has it.
func (r *txnRecords) get(key []byte) (*recState, bool) {
	if r.index != nil {
		i, ok := r.index[string(key)]
		if !ok {
			return nil, false
		}
		return r.list[i].rs, true
	}
	for i := range r.list {
		if r.list[i].key == string(key) {
			return r.list[i].rs, true
		}
	}
	return nil, false
}

// add records rs under key, which the transaction does not have yet.
func (r *txnRecords) add(key string, rs *recState) {
	if r.list == nil {
		r.list = r.first[:0]
	}
	r.list = append(r.list, recEntry{key, rs})
	switch {
	case r.index != nil:
		r.index[key] = len(r.list) - 1
	case len(r.list) > txnRecordsIndexed:
		r.index = make(map[string]int, 2*len(r.list))
		for i, e := range r.list {
			r.index[e.key] = i
		}
	}
}

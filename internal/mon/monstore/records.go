package monstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/cuttlestore/cuttle/encoding"
	pb "go.etcd.io/raft/v3/raftpb"
)

// formatVersion is the version of the key layout, stored under keyFormat.
// Open refuses a store with a newer one.
const formatVersion = 1

// crcTable is Castagnoli, as everywhere in Cuttle; read-only after init.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// seal returns body followed by the CRC-32C of key and body. The key is
// covered so that a value found under the wrong key is detected.
func seal(key, body []byte) []byte {
	c := crc32.Update(crc32.Checksum(key, crcTable), crcTable, body)
	return binary.LittleEndian.AppendUint32(body, c)
}

// unseal checks the checksum that seal appended to a value read under key
// and returns the body, which aliases v.
func unseal(key, v []byte) ([]byte, error) {
	if len(v) < 4 {
		return nil, fmt.Errorf("%w: value of key %x is %d bytes, too short for its checksum", ErrCorrupt, key, len(v))
	}
	body := v[:len(v)-4]
	want := binary.LittleEndian.Uint32(v[len(v)-4:])
	if got := crc32.Update(crc32.Checksum(key, crcTable), crcTable, body); got != want {
		return nil, fmt.Errorf("%w: value of key %x: checksum %08x, want %08x", ErrCorrupt, key, got, want)
	}
	return body, nil
}

// decodeErr marks a decoding error of the value under key as corruption;
// the encoding package's own sentinel stays visible underneath.
func decodeErr(what string, key []byte, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrCorrupt) {
		return fmt.Errorf("%s at key %x: %w", what, key, err)
	}
	return fmt.Errorf("%w: %s at key %x: %w", ErrCorrupt, what, key, err)
}

// encodeFormat encodes the format record: envelope{version u32}.
func encodeFormat() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uint32(formatVersion)
	e.End(m)
	return seal(keyFormat, e.Data())
}

func decodeFormat(v []byte) (uint32, error) {
	body, err := unseal(keyFormat, v)
	if err != nil {
		return 0, err
	}
	d := encoding.NewDecoder(body)
	d.Begin(1)
	ver := d.Uint32()
	d.End()
	return ver, decodeErr("format record", keyFormat, d.Finish())
}

// encodeHardState encodes envelope{term, vote, commit uvarint}.
func encodeHardState(hs *pb.HardState) []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(hs.GetTerm())
	e.Uvarint(hs.GetVote())
	e.Uvarint(hs.GetCommit())
	e.End(m)
	return seal(keyHardState, e.Data())
}

func decodeHardState(v []byte) (*pb.HardState, error) {
	body, err := unseal(keyHardState, v)
	if err != nil {
		return nil, err
	}
	d := encoding.NewDecoder(body)
	d.Begin(1)
	term, vote, commit := d.Uvarint(), d.Uvarint(), d.Uvarint()
	d.End()
	if err := d.Finish(); err != nil {
		return nil, decodeErr("hard state", keyHardState, err)
	}
	return &pb.HardState{Term: &term, Vote: &vote, Commit: &commit}, nil
}

// logState is the position of the entry just before the first entry of the
// log: the last entry compacted away or covered by an installed snapshot.
// Its term is kept because raft matches against it.
type logState struct {
	index, term uint64
}

// encodeLogState encodes envelope{index, term uvarint}.
func encodeLogState(ls logState) []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(ls.index)
	e.Uvarint(ls.term)
	e.End(m)
	return seal(keyLogState, e.Data())
}

func decodeLogState(v []byte) (logState, error) {
	body, err := unseal(keyLogState, v)
	if err != nil {
		return logState{}, err
	}
	d := encoding.NewDecoder(body)
	d.Begin(1)
	ls := logState{index: d.Uvarint(), term: d.Uvarint()}
	d.End()
	return ls, decodeErr("log state", keyLogState, d.Finish())
}

// appliedState is what the state machine has applied: the index of the
// last applied entry and the ConfState in force after it.
type appliedState struct {
	index uint64
	conf  *pb.ConfState
}

// encodeApplied encodes envelope{index uvarint, confstate}.
func encodeApplied(as appliedState) []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(as.index)
	encodeConfState(&e, as.conf)
	e.End(m)
	return seal(keyApplied, e.Data())
}

func decodeApplied(v []byte) (appliedState, error) {
	body, err := unseal(keyApplied, v)
	if err != nil {
		return appliedState{}, err
	}
	d := encoding.NewDecoder(body)
	d.Begin(1)
	as := appliedState{index: d.Uvarint()}
	as.conf = decodeConfState(d)
	d.End()
	return as, decodeErr("applied state", keyApplied, d.Finish())
}

// encodeConfState encodes envelope{voters, learners, voters_outgoing,
// learners_next: each a count and uvarint ids; auto_leave bool}.
func encodeConfState(e *encoding.Encoder, cs *pb.ConfState) {
	m := e.Begin(1, 1)
	for _, ids := range [][]uint64{cs.GetVoters(), cs.GetLearners(), cs.GetVotersOutgoing(), cs.GetLearnersNext()} {
		e.Uvarint(uint64(len(ids)))
		for _, id := range ids {
			e.Uvarint(id)
		}
	}
	e.Bool(cs.GetAutoLeave())
	e.End(m)
}

func decodeConfState(d *encoding.Decoder) *pb.ConfState {
	d.Begin(1)
	defer d.End()
	var lists [4][]uint64
	for i := range lists {
		n := d.Count(1) // a uvarint takes at least one byte
		if n > 0 {
			lists[i] = make([]uint64, n)
		}
		for j := range lists[i] {
			lists[i][j] = d.Uvarint()
		}
	}
	autoLeave := d.Bool()
	return &pb.ConfState{
		Voters:         lists[0],
		Learners:       lists[1],
		VotersOutgoing: lists[2],
		LearnersNext:   lists[3],
		AutoLeave:      &autoLeave,
	}
}

// Presence bits of an encoded entry. raftpb fields are pointers (and Data
// a nil-able slice); keeping which were set makes a decoded entry encode to
// the same protobuf size, so Entries honours maxSize exactly as raft counts.
const (
	entryHasTerm  = 1 << 0
	entryHasIndex = 1 << 1
	entryHasType  = 1 << 2
	entryHasData  = 1 << 3
)

// encodeEntry encodes envelope{presence u8, term, index uvarint, type
// varint, data bytes}, sealed under the entry's key.
func encodeEntry(ent *pb.Entry) []byte {
	var flags uint8
	if ent.Term != nil {
		flags |= entryHasTerm
	}
	if ent.Index != nil {
		flags |= entryHasIndex
	}
	if ent.Type != nil {
		flags |= entryHasType
	}
	if ent.Data != nil {
		flags |= entryHasData
	}
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uint8(flags)
	e.Uvarint(ent.GetTerm())
	e.Uvarint(ent.GetIndex())
	e.Varint(int64(ent.GetType()))
	e.Bytes(ent.Data)
	e.End(m)
	return seal(entryKey(ent.GetIndex()), e.Data())
}

// decodeEntry decodes the entry stored under key and checks that its index
// matches the key.
func decodeEntry(key, v []byte) (*pb.Entry, error) {
	index, err := entryKeyIndex(key)
	if err != nil {
		return nil, err
	}
	body, err := unseal(key, v)
	if err != nil {
		return nil, err
	}
	d := encoding.NewDecoder(body)
	d.Begin(1)
	flags := d.Uint8()
	term := d.Uvarint()
	idx := d.Uvarint()
	typ := d.Varint()
	data := d.Bytes(MaxEntryData)
	d.End()
	switch {
	case flags&^(entryHasTerm|entryHasIndex|entryHasType|entryHasData) != 0:
		d.Fail(fmt.Errorf("%w: unknown entry flags %#x", encoding.ErrCorrupt, flags))
	case idx != index:
		d.Fail(fmt.Errorf("%w: entry says index %d", encoding.ErrCorrupt, idx))
	case typ < math.MinInt32 || typ > math.MaxInt32:
		d.Fail(fmt.Errorf("%w: entry type %d out of range", encoding.ErrCorrupt, typ))
	case flags&entryHasIndex == 0 && idx != 0, flags&entryHasTerm == 0 && term != 0,
		flags&entryHasType == 0 && typ != 0, flags&entryHasData == 0 && len(data) != 0:
		d.Fail(fmt.Errorf("%w: entry has a value for an absent field", encoding.ErrCorrupt))
	}
	if err := d.Finish(); err != nil {
		return nil, decodeErr("log entry", key, err)
	}
	ent := &pb.Entry{}
	if flags&entryHasTerm != 0 {
		ent.Term = &term
	}
	if flags&entryHasIndex != 0 {
		ent.Index = &idx
	}
	if flags&entryHasType != 0 {
		t := pb.EntryType(typ)
		ent.Type = &t
	}
	if flags&entryHasData != 0 {
		if data == nil {
			data = []byte{}
		}
		ent.Data = data
	}
	return ent, nil
}

// entrySize returns the protobuf encoding size of ent's fields, which is
// what raft's maxSize limits count (proto.Size; unknown fields aside).
func entrySize(ent *pb.Entry) uint64 {
	var n uint64
	if ent.Type != nil {
		n += 1 + uvarintLen(uint64(int64(*ent.Type)))
	}
	if ent.Term != nil {
		n += 1 + uvarintLen(*ent.Term)
	}
	if ent.Index != nil {
		n += 1 + uvarintLen(*ent.Index)
	}
	if ent.Data != nil {
		n += 1 + uvarintLen(uint64(len(ent.Data))) + uint64(len(ent.Data))
	}
	return n
}

func uvarintLen(v uint64) uint64 {
	n := uint64(1)
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

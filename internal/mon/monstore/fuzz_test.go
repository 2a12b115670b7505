package monstore

import (
	"encoding/binary"
	"hash/crc32"
	"reflect"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// The fuzz targets take either a whole stored value or only its body, to
// which they append a valid checksum so that the fuzzer gets past it.

func FuzzDecodeEntry(f *testing.F) {
	f.Add(uint64(5), encodeEntry(mkEntry(5, 2, []byte("data"))), false)
	f.Add(uint64(1), encodeEntry(&pb.Entry{Index: new(uint64(1))}), false)
	f.Add(uint64(7), []byte{1, 1, 5, 0, 0, 0, 0xf, 1, 7, 1, 0}, true)
	f.Fuzz(func(t *testing.T, index uint64, v []byte, sealIt bool) {
		k := entryKey(index)
		if sealIt {
			v = seal(k, v)
		}
		e, err := decodeEntry(k, v)
		if err != nil {
			return
		}
		if e.GetIndex() != index {
			t.Fatalf("decoded entry %d under key %d", e.GetIndex(), index)
		}
		back, err := decodeEntry(k, encodeEntry(e))
		if err != nil || !proto.Equal(back, e) {
			t.Fatalf("re-encoding %v: %v, %v", e, back, err)
		}
		if entrySize(e) != uint64(proto.Size(e)) {
			t.Fatalf("entrySize %d, proto.Size %d", entrySize(e), proto.Size(e))
		}
	})
}

func FuzzDecodeRecords(f *testing.F) {
	f.Add(encodeHardState(mkHardState(3, 2, 1)), false)
	f.Add(encodeLogState(logState{index: 9, term: 2}), false)
	f.Add(encodeApplied(appliedState{index: 4, conf: &pb.ConfState{Voters: []uint64{1, 2}, LearnersNext: []uint64{3}}}), false)
	f.Add(encodeFormat(), false)
	f.Add(encodeEpoch(12), true)
	f.Fuzz(func(t *testing.T, v []byte, sealIt bool) {
		sealed := func(key []byte) []byte {
			if sealIt {
				return seal(key, v)
			}
			return v
		}
		if hs, err := decodeHardState(sealed(keyHardState)); err == nil {
			back, err := decodeHardState(encodeHardState(hs))
			if err != nil || !proto.Equal(back, hs) {
				t.Fatalf("hard state %v: %v, %v", hs, back, err)
			}
		}
		if ls, err := decodeLogState(sealed(keyLogState)); err == nil {
			if back, err := decodeLogState(encodeLogState(ls)); err != nil || back != ls {
				t.Fatalf("log state %v: %v, %v", ls, back, err)
			}
		}
		if as, err := decodeApplied(sealed(keyApplied)); err == nil {
			back, err := decodeApplied(encodeApplied(as))
			if err != nil || back.index != as.index || !proto.Equal(back.conf, as.conf) {
				t.Fatalf("applied state %v: %v, %v", as, back, err)
			}
		}
		_, _ = decodeFormat(sealed(keyFormat))
		if e, err := decodeEpoch("s", "k", v); err == nil {
			if back, err := decodeEpoch("s", "k", encodeEpoch(e)); err != nil || back != e {
				t.Fatalf("epoch %d: %d, %v", e, back, err)
			}
		}
	})
}

func FuzzDecodeSnapshotData(f *testing.F) {
	f.Add(encodeSnapshotData(7, []snapshotRecord{
		{service: "auth", key: []byte("a"), value: []byte("x")},
		{service: "osdmap", key: []byte("full/1"), value: nil},
	}), false)
	f.Add(encodeSnapshotData(1, nil), false)
	f.Add([]byte{1, 1, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}, true)
	f.Fuzz(func(t *testing.T, data []byte, fixCRC bool) {
		if fixCRC {
			data = binary.LittleEndian.AppendUint32(data, crc32.Checksum(data, crcTable))
		}
		index, recs, err := decodeSnapshotData(data, 1<<20)
		if err != nil {
			return
		}
		for i, r := range recs {
			if checkService(r.service) != nil || len(r.key) > MaxKey || len(r.value) > MaxValue {
				t.Fatalf("record %d out of bounds: %q %d %d", i, r.service, len(r.key), len(r.value))
			}
		}
		index2, recs2, err := decodeSnapshotData(encodeSnapshotData(index, recs), 1<<20)
		if err != nil || index2 != index || !reflect.DeepEqual(recs, recs2) {
			t.Fatalf("re-encoding: %d %v, %v", index2, recs2, err)
		}
	})
}

func FuzzSplitServiceKey(f *testing.F) {
	f.Add([]byte("\x10osdmap\x00full/1"))
	f.Add([]byte("\x10\x00"))
	f.Fuzz(func(t *testing.T, k []byte) {
		svc, key, err := splitServiceKey(k)
		if err != nil {
			return
		}
		if checkService(svc) != nil || checkKey(key) != nil || string(serviceKey(svc, key)) != string(k) {
			t.Fatalf("split %q into %q %q", k, svc, key)
		}
	})
}

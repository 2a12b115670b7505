package blockstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/wal"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
)

// readLoggedDeferred fills in the data of the writes in ws that have
// none from the LogData records of the WAL files in dir (walkeep.go),
// and fails with ErrCorrupt if one's data is in none of them.
func readLoggedDeferred(fs vfs.FS, dir string, sb format.Superblock, ws []*pendingWrite) error {
	readErr := fillLogged(fs, dir, sb, ws)
	for _, p := range ws {
		if p.w.Data == nil {
			err := fmt.Errorf("%w: deferred write %x: its data is in no WAL file", objectstore.ErrCorrupt, p.key)
			return errors.Join(err, readErr)
		}
	}
	return nil
}

// fillLogged fills in what readLoggedDeferred does. A WAL's torn or
// recycled tail ends it, as it ends Pebble's replay; a WAL that cannot
// be read is skipped, and its error returned.
func fillLogged(fs vfs.FS, dir string, sb format.Superblock, ws []*pendingWrite) error {
	want := make(map[string]*pendingWrite)
	for _, p := range ws {
		if p.w.Data == nil {
			want[string(p.key)] = p
		}
	}
	if len(want) == 0 {
		return nil
	}
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: dir})
	if err != nil {
		return fmt.Errorf("list WAL files: %w", err)
	}
	var errs []error
	for _, ll := range logs {
		if err := readLoggedFrom(ll, sb, want); err != nil {
			errs = append(errs, fmt.Errorf("WAL %s: %w", ll, err))
		}
	}
	return errors.Join(errs...)
}

// readLoggedFrom reads one WAL's records and fills in the wanted writes
// it holds.
func readLoggedFrom(ll wal.LogicalLog, sb format.Superblock, want map[string]*pendingWrite) error {
	r := ll.OpenForRead()
	defer r.Close()
	for {
		rec, _, err := r.NextRecord()
		if errors.Is(err, io.EOF) || endOfLog(err) {
			return nil
		}
		if err != nil {
			return err
		}
		repr, err := io.ReadAll(rec)
		if err != nil {
			return err
		}
		if err := takeLogged(repr, sb, want); err != nil {
			return err
		}
	}
}

// endOfLog reports whether err ends a WAL the way a crash or a recycled
// file leaves it.
func endOfLog(err error) bool {
	return errors.Is(err, record.ErrZeroedChunk) || errors.Is(err, record.ErrInvalidChunk) ||
		errors.Is(err, record.ErrUnexpectedEOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// takeLogged fills in the wanted writes among the LogData records of
// repr, one batch as written to the WAL.
func takeLogged(repr []byte, sb format.Superblock, want map[string]*pendingWrite) error {
	if len(repr) < batchHeaderLen {
		return fmt.Errorf("%w: WAL batch of %d bytes", objectstore.ErrCorrupt, len(repr))
	}
	for rest := repr[batchHeaderLen:]; len(rest) > 0; {
		kind, payload, next, err := nextBatchRecord(rest)
		if err != nil {
			return err
		}
		rest = next
		if kind != pebble.InternalKeyKindLogData {
			continue
		}
		seq, w, ours, err := format.DecodeLoggedDeferred(payload, sb)
		if !ours {
			continue
		}
		if err != nil {
			return err
		}
		if p := want[string(format.DeferredKey(seq, w.DevOff))]; p != nil {
			p.w = w
		}
	}
	return nil
}

// batchHeaderLen is the length of a Pebble batch's header: its seq
// (8 bytes) and count (4).
const batchHeaderLen = 12

// nextBatchRecord decodes the record at the start of b, in Pebble's
// batch format: a kind byte, a varint-prefixed key and, for the kinds
// that have one, a varint-prefixed value. (Pebble's own decoder
// trusts its input; a WAL on disk is not trusted here.)
func nextBatchRecord(b []byte) (kind pebble.InternalKeyKind, key, rest []byte, err error) {
	kind = pebble.InternalKeyKind(b[0])
	if kind > pebble.InternalKeyKindMax {
		return 0, nil, nil, fmt.Errorf("%w: WAL batch: record kind %d", objectstore.ErrCorrupt, kind)
	}
	key, rest, err = batchString(b[1:])
	if err != nil {
		return 0, nil, nil, err
	}
	switch kind {
	case pebble.InternalKeyKindSet, pebble.InternalKeyKindMerge, pebble.InternalKeyKindRangeDelete,
		pebble.InternalKeyKindRangeKeySet, pebble.InternalKeyKindRangeKeyUnset, pebble.InternalKeyKindRangeKeyDelete,
		pebble.InternalKeyKindDeleteSized, pebble.InternalKeyKindExcise:
		_, rest, err = batchString(rest)
	}
	return kind, key, rest, err
}

// batchString decodes a varint-prefixed string at the start of b.
func batchString(b []byte) (s, rest []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, fmt.Errorf("%w: WAL batch: truncated record", objectstore.ErrCorrupt)
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

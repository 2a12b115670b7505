// Package monstore is the monitor's durable store: the Raft log and state
// of the monitor's raft.RawNode, the state machine's applied index and
// service key space (the "paxos services" of Ceph: OSD map, MDS map, auth,
// config), map history by epoch, and the snapshot payload that carries the
// key space to a follower that fell behind the compacted log. Everything is
// in one Pebble database opened through a pebble vfs.FS, so tests inject
// crashes (vfs.NewCrashableMem, CrashClone) and I/O errors (errorfs).
//
// It owns the key layout and record formats below and implements
// raft.Storage. It knows nothing of what services store (values are opaque
// bytes), of the network, or of how entries are turned into changes: the
// monitor's driver (internal/mon) applies committed entries and hands the
// resulting Batch to Commit. It imports only Pebble, raft, encoding and the
// standard library.
//
// # Key layout
//
// Every key starts with a one-byte prefix. Every value ends with a CRC-32C
// (little-endian u32) of the key and the value's body, so a damaged value,
// or one under the wrong key, reads as ErrCorrupt. Bodies of the store's
// own records are encoding envelopes (version 1):
//
//	0x01                   format: envelope{version u32}, currently 1
//	0x02                   raft HardState: envelope{term, vote, commit uvarint}
//	0x03                   log state: envelope{index, term uvarint} of the entry
//	                       before the first one (last compacted or snapshot entry)
//	0x04                   applied state: envelope{index uvarint, ConfState}, where
//	                       ConfState is envelope{voters, learners, voters_outgoing,
//	                       learners_next: count + uvarint ids each; auto_leave bool}
//	0x05 <index u64 BE>    raft log entry: envelope{presence u8, term uvarint,
//	                       index uvarint, type varint, data bytes}
//	0x10 <service> 0x00 <key>
//	                       service key space: the service's value, opaque
//
// A service name is 1 to MaxServiceName bytes without NUL; a key at most
// MaxKey bytes; a value at most MaxValue bytes. Services that keep a map by
// epoch use the history helpers (history.go), which store "full/<epoch>",
// "inc/<epoch>", "first_committed" and "last_committed" keys in the
// service's key space. The snapshot payload format is in snapshot.go.
// docs/MONSTORE.md describes the same layout for operators.
//
// # Durability contract
//
//   - Append writes a Ready's HardState, snapshot and entries in one batch
//     and syncs before returning: the driver sends the Ready's messages
//     only after it returns. After a crash every Append that returned is
//     there, and any later one is there entirely or not at all.
//   - Commit writes a Batch of service changes, an optional new ConfState
//     and the applied index in one synced batch, so after a restart the
//     service key space is exactly the result of applying the entries up to
//     AppliedIndex, which the driver passes as raft.Config.Applied.
//   - Installing a snapshot (Append with a Ready's snapshot) replaces the
//     log, the key space and the applied index in the same batch.
//   - Compact drops applied entries behind a new log start without a sync:
//     a crash can only bring them back.
//   - A write that fails leaves the store failed (ErrFailed): the disk holds
//     the state before or after the failed batch, so the caller reopens.
//   - Open checks every record of the raft state and log; reads check the
//     checksum of every value. Corruption is reported with ErrCorrupt,
//     never served and never a panic.
//
// # Concurrency
//
// A Store is safe for concurrent use: raft.Storage methods and reads share
// a lock that writes (Append, Commit, Compact) hold exclusively. Close must
// not run concurrently with other calls. A Batch belongs to one goroutine,
// and one Batch at a time should be open.
//
// Start reading at Append (append.go) and Commit (service.go); the
// raft.Storage methods are in storage.go.
package monstore

// Package journal is the MDS journal, after Ceph's Journaler: an
// append-only stream of entries striped over the objects of one inode in
// the metadata pool, with a header object that says where the stream
// starts and ends. Every metadata update is journaled (and the journal
// flushed) before the MDS answers it; a restarted or standby MDS replays
// the journal from its expire position to rebuild what the directory
// objects do not yet hold; and the MDS trims the journal once it has
// written those updates back.
//
// Layout in RADOS (docs/FORMATS.md, "MDS journal"): object
// "<ino hex>.00000000" holds the header (format, generation, trimmed,
// expire and write positions, the stream's layout); the stream is the
// file of the same inode, striped by the striper package, starting at the
// layout's period (Ceph's choice: offset 0 of the stream is in object 0,
// which the header takes, so the first object set is left unused). Each
// entry is framed: magic, generation, length, CRC32C and the payload. The
// CRC covers the entry's stream position, so a frame is valid only where
// it was written; the generation (raised by every writer that recovers
// the journal, before it appends) makes stale frames that a crashed
// writer left beyond the end of the stream invalid once a later writer
// has overwritten the stream before them.
//
// Writer appends and flushes (Append, Flush, FlushAsync: a flush returns,
// or calls back, only once the OSDs have committed every byte up to its
// end and everything before), trims (Trim) and writes the header
// (WriteHead). Recover replays a journal and returns the Writer that
// continues it. Follower follows a live journal for a standby-replay
// MDS. Entries are opaque bytes; the MDS's events are encoded above.
//
// A Writer and a Follower are safe for concurrent use. Start with Create,
// Recover and Writer.Append.
package journal

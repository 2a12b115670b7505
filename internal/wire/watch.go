package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Watch/notify (Ceph's watch2/notify2): a client watches an object on
// its PG's primary with OpWatch; the primary keeps the watch with the
// object (an attribute, so a new primary finds it) and sends the watcher
// a WatchNotify for every notify on the object; the watcher answers with
// OpNotifyAck, and the notifier's OpNotify completes with a NotifyResult
// once every watcher answered or its timeout passed.

// OpWatch sub-operations, in the op's Flags.
const (
	// WatchRegister starts a watch (Version: cookie, Length: timeout in
	// seconds, 0 for the OSD's osd_client_watch_timeout).
	WatchRegister = 1
	// WatchReconnect re-registers a watch the client had (after a new map
	// or a lost session): ENOTCONN if the OSD no longer has it, so the
	// client knows it may have missed notifies.
	WatchReconnect = 2
	// WatchUnregister ends a watch.
	WatchUnregister = 3
)

// ENOTCONN answers a ping or reconnect of a watch the OSD does not have
// (it timed out, or its object was deleted); a watcher is told it with a
// WatchNotify of kind WatchEventError.
const ENOTCONN = 107

// WatchNotify kinds.
const (
	// WatchEventNotify carries a notify's payload; the watcher acks it.
	WatchEventNotify = 1
	// WatchEventError says the watch is gone (Errno): the watcher must
	// watch again and re-read what it watches.
	WatchEventError = 2
)

// WatchNotify is an OSD's unsolicited message to a watcher, on the
// session its watch came over.
type WatchNotify struct {
	Kind     uint8
	Object   string // the watched object's name, for logs
	Cookie   uint64 // which of the client's watches
	NotifyID uint64 // the notify to ack (WatchEventNotify)
	Notifier string // the entity that notified
	Payload  []byte
	Errno    int32 // WatchEventError: why (ENOTCONN)
}

// Limits on decoded watch messages.
const (
	maxNotifyPayload = 64 << 20
	maxWatchers      = 1 << 16
)

// Encode encodes m (version 1).
func (m WatchNotify) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint8(m.Kind)
	e.String(m.Object)
	e.Uint64(m.Cookie)
	e.Uint64(m.NotifyID)
	e.String(m.Notifier)
	e.Bytes(m.Payload)
	e.Varint(int64(m.Errno))
	e.End(mk)
	return e.Data()
}

// DecodeWatchNotify decodes a WatchNotify; Payload is a copy.
func DecodeWatchNotify(b []byte) (WatchNotify, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := WatchNotify{Kind: d.Uint8(), Object: d.String(maxKeyLen), Cookie: d.Uint64(), NotifyID: d.Uint64(),
		Notifier: d.String(maxClient), Payload: d.Bytes(maxNotifyPayload)}
	m.Errno = decodeResult(d)
	d.End()
	if err := d.Finish(); err != nil {
		return WatchNotify{}, fmt.Errorf("wire: watch notify: %w", err)
	}
	if m.Kind != WatchEventNotify && m.Kind != WatchEventError {
		return WatchNotify{}, fmt.Errorf("wire: watch notify: %w: kind %d", encoding.ErrCorrupt, m.Kind)
	}
	return m, nil
}

// WatcherID names one watch: the client entity and its cookie.
type WatcherID struct {
	Client string
	Cookie uint64
}

func (w WatcherID) String() string { return fmt.Sprintf("%s/%d", w.Client, w.Cookie) }

// Compare orders watcher ids by client, then cookie.
func (w WatcherID) Compare(v WatcherID) int {
	switch {
	case w.Client < v.Client:
		return -1
	case w.Client > v.Client:
		return 1
	case w.Cookie < v.Cookie:
		return -1
	case w.Cookie > v.Cookie:
		return 1
	}
	return 0
}

// WatchInfo is a watch as the OSD persists it with the object and lists
// it (OpListWatchers): who, and its timeout in seconds (0: the OSD's
// default).
type WatchInfo struct {
	WatcherID
	TimeoutSec uint32
}

// Encode encodes w (version 1).
func (w WatchInfo) Encode() []byte {
	var e encoding.Encoder
	encodeWatchInfo(&e, w)
	return e.Data()
}

func encodeWatchInfo(e *encoding.Encoder, w WatchInfo) {
	mk := e.Begin(1, 1)
	e.String(w.Client)
	e.Uint64(w.Cookie)
	e.Uint32(w.TimeoutSec)
	e.End(mk)
}

func decodeWatchInfo(d *encoding.Decoder) WatchInfo {
	d.Begin(1)
	w := WatchInfo{WatcherID: WatcherID{Client: d.String(maxClient), Cookie: d.Uint64()}, TimeoutSec: d.Uint32()}
	d.End()
	return w
}

// DecodeWatchInfo decodes a WatchInfo.
func DecodeWatchInfo(b []byte) (WatchInfo, error) {
	d := encoding.NewDecoder(b)
	w := decodeWatchInfo(d)
	if err := d.Finish(); err != nil {
		return WatchInfo{}, fmt.Errorf("wire: watch info: %w", err)
	}
	return w, nil
}

// EncodeWatchers encodes the list OpListWatchers returns (version 1).
func EncodeWatchers(ws []WatchInfo) []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(uint64(len(ws)))
	for _, w := range ws {
		encodeWatchInfo(&e, w)
	}
	e.End(mk)
	return e.Data()
}

// DecodeWatchers decodes OpListWatchers' result.
func DecodeWatchers(b []byte) ([]WatchInfo, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	n := d.Count(6 + 1 + 8 + 4)
	if n > maxWatchers {
		d.Fail(fmt.Errorf("%w: %d watchers", encoding.ErrCorrupt, n))
	}
	var ws []WatchInfo
	for i := 0; i < n && d.Err() == nil; i++ {
		ws = append(ws, decodeWatchInfo(d))
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("wire: watchers: %w", err)
	}
	return ws, nil
}

// NotifyAck is one watcher's answer to a notify.
type NotifyAck struct {
	WatcherID
	Payload []byte
}

// NotifyResult is what an OpNotify returns (in its result's Data): the
// watchers that acked, with their reply payloads, and those that did not
// answer before the notify's timeout, each list in watcher order.
type NotifyResult struct {
	Acks     []NotifyAck
	TimedOut []WatcherID
}

// Encode encodes r (version 1).
func (r NotifyResult) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(uint64(len(r.Acks)))
	for _, a := range r.Acks {
		e.String(a.Client)
		e.Uint64(a.Cookie)
		e.Bytes(a.Payload)
	}
	e.Uvarint(uint64(len(r.TimedOut)))
	for _, w := range r.TimedOut {
		e.String(w.Client)
		e.Uint64(w.Cookie)
	}
	e.End(mk)
	return e.Data()
}

// DecodeNotifyResult decodes a NotifyResult; payloads are copies.
func DecodeNotifyResult(b []byte) (NotifyResult, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	var r NotifyResult
	n := d.Count(1 + 8 + 1)
	if n > maxWatchers {
		d.Fail(fmt.Errorf("%w: %d acks", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		r.Acks = append(r.Acks, NotifyAck{WatcherID: WatcherID{Client: d.String(maxClient), Cookie: d.Uint64()},
			Payload: d.Bytes(maxNotifyPayload)})
	}
	n = d.Count(1 + 8)
	if n > maxWatchers {
		d.Fail(fmt.Errorf("%w: %d timed out", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		r.TimedOut = append(r.TimedOut, WatcherID{Client: d.String(maxClient), Cookie: d.Uint64()})
	}
	d.End()
	if err := d.Finish(); err != nil {
		return NotifyResult{}, fmt.Errorf("wire: notify result: %w", err)
	}
	return r, nil
}

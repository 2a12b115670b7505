package rbd

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// A notice is what one opener of an image tells the others through a
// notify on the image's header object (docs/FORMATS.md "Block images:
// header notices").
type notice struct {
	Kind noticeKind
	// Instance and Cookie name the sender: its Conn's instance and its
	// watch's cookie (so it can tell its own notices from others').
	Instance string
	Cookie   uint64
}

// noticeKind is what a notice says.
type noticeKind uint8

const (
	// noticeHeaderUpdate: the header changed (size, snapshots): refresh
	// before the next I/O.
	noticeHeaderUpdate noticeKind = 1
	// noticeRequestLock: the sender wants the exclusive lock; its
	// holder finishes its I/O in progress and releases it.
	noticeRequestLock noticeKind = 2
	// noticeReleasedLock: the sender released the exclusive lock; those
	// waiting for it try again.
	noticeReleasedLock noticeKind = 3
	// noticeAcquiredLock: the sender took the exclusive lock.
	noticeAcquiredLock noticeKind = 4
)

func (k noticeKind) String() string {
	switch k {
	case noticeHeaderUpdate:
		return "header-update"
	case noticeRequestLock:
		return "request-lock"
	case noticeReleasedLock:
		return "released-lock"
	case noticeAcquiredLock:
		return "acquired-lock"
	}
	return fmt.Sprintf("notice-%d", uint8(k))
}

// maxInstanceLen bounds a notice's instance name.
const maxInstanceLen = 512

// encode encodes n: version 1: kind, instance, cookie.
func (n notice) encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint8(uint8(n.Kind))
	e.String(n.Instance)
	e.Uint64(n.Cookie)
	e.End(mk)
	return e.Data()
}

// decodeNotice decodes what encode wrote; a kind this version does not
// know decodes (and is ignored by the receiver), for later versions.
func decodeNotice(b []byte) (notice, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	n := notice{Kind: noticeKind(d.Uint8()), Instance: d.String(maxInstanceLen), Cookie: d.Uint64()}
	d.End()
	if err := d.Finish(); err != nil {
		return notice{}, fmt.Errorf("rbd: header notice: %w", err)
	}
	return n, nil
}

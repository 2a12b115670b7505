package meta

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/rados"
)

func uploadKey(key, id string) string { return key + "\x00" + id }
func partKey(n int) string            { return fmt.Sprintf("%05d", n) }

// CreateUpload starts a multipart upload and returns it with its id.
func (s *Store) CreateUpload(ctx context.Context, b Bucket, u Upload) (Upload, error) {
	u.ID = randomString(16, func(p []byte) string { return fmt.Sprintf("%x", p) })
	u.Initiated = s.Now()
	w := rados.NewWriteOp()
	w.Create(true)
	if err := s.io.OperateWrite(ctx, partsObj(u.ID), w); err != nil {
		return Upload{}, fmt.Errorf("create upload: %w", err)
	}
	if err := s.io.SetOmap(ctx, uploadsObj(b.ID), map[string][]byte{uploadKey(u.Key, u.ID): u.Encode()}); err != nil {
		return Upload{}, fmt.Errorf("create upload: %w", err)
	}
	return u, nil
}

// GetUpload returns an upload in progress.
func (s *Store) GetUpload(ctx context.Context, b Bucket, key, id string) (Upload, error) {
	m, err := s.io.GetOmapValuesByKeys(ctx, uploadsObj(b.ID), uploadKey(key, id))
	if err != nil && !errors.Is(err, rados.ErrNotFound) {
		return Upload{}, fmt.Errorf("upload %s: %w", id, err)
	}
	raw, ok := m[uploadKey(key, id)]
	if !ok {
		return Upload{}, fmt.Errorf("%w: %s", ErrNoSuchUpload, id)
	}
	return DecodeUpload(raw)
}

// ListUploads returns up to max uploads with keys beginning with prefix,
// after (key, id) markers, in order, and whether more follow.
func (s *Store) ListUploads(ctx context.Context, b Bucket, prefix, after string, max int) ([]Upload, bool, error) {
	kvs, more, err := s.io.GetOmapValues(ctx, uploadsObj(b.ID), after, prefix, uint64(max))
	if errors.Is(err, rados.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("list uploads: %w", err)
	}
	out := make([]Upload, 0, len(kvs))
	for _, p := range kvs {
		u, err := DecodeUpload(p.Value)
		if err != nil {
			return nil, false, err
		}
		out = append(out, u)
	}
	return out, more, nil
}

// UploadMarker is the omap position after (key, id) for ListUploads.
func UploadMarker(key, id string) string {
	if id == "" {
		return key + "\x00\xff"
	}
	return uploadKey(key, id)
}

// PutPart records an uploaded part (replacing one of that number) and
// returns the part it replaced, if any.
func (s *Store) PutPart(ctx context.Context, uploadID string, p Part) (Part, bool, error) {
	old, err := s.io.GetOmapValuesByKeys(ctx, partsObj(uploadID), partKey(p.Number))
	if errors.Is(err, rados.ErrNotFound) {
		return Part{}, false, fmt.Errorf("%w: %s", ErrNoSuchUpload, uploadID)
	}
	if err != nil {
		return Part{}, false, fmt.Errorf("upload %s: %w", uploadID, err)
	}
	w := rados.NewWriteOp()
	w.AssertExists()
	w.SetOmap(map[string][]byte{partKey(p.Number): p.Encode()})
	if err := s.io.OperateWrite(ctx, partsObj(uploadID), w); err != nil {
		if errors.Is(err, rados.ErrNotFound) {
			return Part{}, false, fmt.Errorf("%w: %s", ErrNoSuchUpload, uploadID)
		}
		return Part{}, false, fmt.Errorf("upload %s: part %d: %w", uploadID, p.Number, err)
	}
	if raw, ok := old[partKey(p.Number)]; ok {
		op, err := DecodePart(raw)
		if err == nil {
			return op, true, nil
		}
	}
	return Part{}, false, nil
}

// ListParts returns up to max parts numbered above after, and whether
// more follow.
func (s *Store) ListParts(ctx context.Context, uploadID string, after, max int) ([]Part, bool, error) {
	start := ""
	if after > 0 {
		start = partKey(after)
	}
	kvs, more, err := s.io.GetOmapValues(ctx, partsObj(uploadID), start, "", uint64(max))
	if errors.Is(err, rados.ErrNotFound) {
		return nil, false, fmt.Errorf("%w: %s", ErrNoSuchUpload, uploadID)
	}
	if err != nil {
		return nil, false, fmt.Errorf("upload %s: parts: %w", uploadID, err)
	}
	out := make([]Part, 0, len(kvs))
	for _, p := range kvs {
		pt, err := DecodePart(p.Value)
		if err != nil {
			return nil, false, err
		}
		out = append(out, pt)
	}
	return out, more, nil
}

// AllParts returns every part of an upload.
func (s *Store) AllParts(ctx context.Context, uploadID string) ([]Part, error) {
	var all []Part
	after := 0
	for {
		ps, more, err := s.ListParts(ctx, uploadID, after, 1000)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
		if !more || len(ps) == 0 {
			return all, nil
		}
		after = ps[len(ps)-1].Number
	}
}

// FinishUpload forgets an upload (completed or aborted): its parts object
// and its entry in the bucket's list. The parts' data are the caller's.
func (s *Store) FinishUpload(ctx context.Context, b Bucket, key, id string) error {
	if err := s.io.Delete(ctx, partsObj(id)); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("finish upload %s: %w", id, err)
	}
	if err := s.io.RmOmapKeys(ctx, uploadsObj(b.ID), uploadKey(key, id)); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("finish upload %s: %w", id, err)
	}
	return nil
}

// SplitUploadKey splits an uploads omap key into object key and id.
func SplitUploadKey(k string) (key, id string) {
	i := strings.LastIndexByte(k, 0)
	if i < 0 {
		return k, ""
	}
	return k[:i], k[i+1:]
}

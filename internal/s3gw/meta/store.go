package meta

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// Errors; test for them with errors.Is.
var (
	ErrNoSuchUser      = errors.New("s3 meta: no such user")
	ErrUserExists      = errors.New("s3 meta: user exists")
	ErrUserHasBuckets  = errors.New("s3 meta: user owns buckets")
	ErrNoSuchKey       = errors.New("s3 meta: no such access key")
	ErrNoSuchBucket    = errors.New("s3 meta: no such bucket")
	ErrBucketOwned     = errors.New("s3 meta: bucket already owned by you")
	ErrBucketExists    = errors.New("s3 meta: bucket already exists")
	ErrBucketNotEmpty  = errors.New("s3 meta: bucket not empty")
	ErrNoSuchObject    = errors.New("s3 meta: no such object")
	ErrNoSuchUpload    = errors.New("s3 meta: no such upload")
	ErrConflict        = errors.New("s3 meta: concurrent change, retry")
	ErrInvalidUserName = errors.New("s3 meta: invalid user name")
)

// Object names (see the package doc).
const (
	usersObj   = "s3.users"
	userAttr   = "s3.user"
	keyAttr    = "s3.key"
	bucketAttr = "s3.bucket"
)

func userObj(name string) string        { return "s3.user." + name }
func keyObj(access string) string       { return "s3.key." + access }
func bucketObj(name string) string      { return "s3.bucket." + name }
func uploadsObj(bucketID string) string { return "s3.uploads." + bucketID }
func partsObj(uploadID string) string   { return "s3.parts." + uploadID }
func indexName(bucketID string) string  { return "b." + bucketID }

// Store is the gateway's view of its pool.
type Store struct {
	io  *rados.IOContext
	kvc kv.Config
	now func() time.Time

	mu      sync.Mutex
	indexes map[string]*Index // by bucket id
}

// NewStore returns a Store over io (the gateway's pool); now is the
// clock of records' times (time.Now when nil).
func NewStore(io *rados.IOContext, kvc kv.Config, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{io: io, kvc: kvc, now: now, indexes: map[string]*Index{}}
}

// IO returns the pool's I/O context.
func (s *Store) IO() *rados.IOContext { return s.io }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now().UTC() }

func randomString(n int, enc func([]byte) string) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+).
	return enc(b)
}

// NewID returns a random 64-bit data id (never 0).
func NewID() uint64 {
	for {
		var b [8]byte
		_, _ = rand.Read(b[:])
		if v := binary.LittleEndian.Uint64(b[:]); v != 0 {
			return v
		}
	}
}

func newKey() Key {
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alpha[int(b[i])%len(alpha)]
	}
	return Key{
		Access: "CK" + string(b[2:]),
		Secret: randomString(30, base64.StdEncoding.EncodeToString),
	}
}

func validUserName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%w: %q: 1 to 64 characters", ErrInvalidUserName, name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.@", c)) {
			return fmt.Errorf("%w: %q: letters, digits and -_.@ only", ErrInvalidUserName, name)
		}
	}
	return nil
}

// CreateUser creates a user with one new key.
func (s *Store) CreateUser(ctx context.Context, name, display string) (User, error) {
	if err := validUserName(name); err != nil {
		return User{}, err
	}
	if display == "" {
		display = name
	}
	u := User{Name: name, DisplayName: display, Keys: []Key{newKey()}, Created: s.Now()}
	if err := s.createKeyObject(ctx, u.Keys[0].Access, name); err != nil {
		return User{}, err
	}
	w := rados.NewWriteOp()
	w.Create(true)
	w.SetXattr(userAttr, u.Encode())
	if err := s.io.OperateWrite(ctx, userObj(name), w); err != nil {
		_ = s.io.Delete(ctx, keyObj(u.Keys[0].Access))
		if errors.Is(err, rados.ErrExists) {
			return User{}, fmt.Errorf("%w: %s", ErrUserExists, name)
		}
		return User{}, fmt.Errorf("create user %s: %w", name, err)
	}
	if err := s.io.SetOmap(ctx, usersObj, map[string][]byte{name: nil}); err != nil {
		return User{}, fmt.Errorf("create user %s: list it: %w", name, err)
	}
	return u, nil
}

func (s *Store) createKeyObject(ctx context.Context, access, user string) error {
	w := rados.NewWriteOp()
	w.Create(true)
	w.SetXattr(keyAttr, []byte(user))
	if err := s.io.OperateWrite(ctx, keyObj(access), w); err != nil {
		return fmt.Errorf("create key for %s: %w", user, err)
	}
	return nil
}

// GetUser returns a user.
func (s *Store) GetUser(ctx context.Context, name string) (User, error) {
	u, _, err := s.getUser(ctx, name)
	return u, err
}

func (s *Store) getUser(ctx context.Context, name string) (User, []byte, error) {
	if err := validUserName(name); err != nil {
		return User{}, nil, fmt.Errorf("%w: %s", ErrNoSuchUser, name)
	}
	raw, err := s.io.GetXattr(ctx, userObj(name), userAttr)
	if errors.Is(err, rados.ErrNotFound) || errors.Is(err, rados.ErrNoAttr) {
		return User{}, nil, fmt.Errorf("%w: %s", ErrNoSuchUser, name)
	}
	if err != nil {
		return User{}, nil, fmt.Errorf("user %s: %w", name, err)
	}
	u, err := DecodeUser(raw)
	return u, raw, err
}

// updateUser applies f to the user's record if no one changed it since it
// was read (ErrConflict otherwise).
func (s *Store) updateUser(ctx context.Context, name string, f func(*User) error) (User, error) {
	for attempt := 0; attempt < 5; attempt++ {
		u, raw, err := s.getUser(ctx, name)
		if err != nil {
			return User{}, err
		}
		if err := f(&u); err != nil {
			return User{}, err
		}
		w := rados.NewWriteOp()
		w.CmpXattr(userAttr, rados.CmpEq, raw)
		w.SetXattr(userAttr, u.Encode())
		err = s.io.OperateWrite(ctx, userObj(name), w)
		if errors.Is(err, rados.ErrCompareFailed) {
			continue
		}
		if err != nil {
			return User{}, fmt.Errorf("update user %s: %w", name, err)
		}
		return u, nil
	}
	return User{}, fmt.Errorf("%w: user %s", ErrConflict, name)
}

// ListUsers returns the users' names in order.
func (s *Store) ListUsers(ctx context.Context) ([]string, error) {
	var names []string
	after := ""
	for {
		kvs, more, err := s.io.GetOmapValues(ctx, usersObj, after, "", 1000)
		if errors.Is(err, rados.ErrNotFound) {
			return names, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		for _, p := range kvs {
			names = append(names, p.Key)
			after = p.Key
		}
		if !more || len(kvs) == 0 {
			return names, nil
		}
	}
}

// RemoveUser removes a user that owns no bucket, and its keys.
func (s *Store) RemoveUser(ctx context.Context, name string) error {
	u, err := s.GetUser(ctx, name)
	if err != nil {
		return err
	}
	b, _, err := s.io.GetOmapValues(ctx, userObj(name), "", "", 1)
	if err != nil {
		return fmt.Errorf("remove user %s: %w", name, err)
	}
	if len(b) > 0 {
		return fmt.Errorf("%w: %s owns %s (remove the buckets first)", ErrUserHasBuckets, name, b[0].Key)
	}
	for _, k := range u.Keys {
		if err := s.io.Delete(ctx, keyObj(k.Access)); err != nil && !errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("remove user %s: key %s: %w", name, k.Access, err)
		}
	}
	if err := s.io.Delete(ctx, userObj(name)); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("remove user %s: %w", name, err)
	}
	return s.io.RmOmapKeys(ctx, usersObj, name)
}

// CreateKey adds a new key to a user.
func (s *Store) CreateKey(ctx context.Context, name string) (Key, error) {
	k := newKey()
	if _, err := s.GetUser(ctx, name); err != nil {
		return Key{}, err
	}
	if err := s.createKeyObject(ctx, k.Access, name); err != nil {
		return Key{}, err
	}
	_, err := s.updateUser(ctx, name, func(u *User) error {
		u.Keys = append(u.Keys, k)
		return nil
	})
	if err != nil {
		_ = s.io.Delete(ctx, keyObj(k.Access))
		return Key{}, err
	}
	return k, nil
}

// RemoveKey removes one of a user's keys.
func (s *Store) RemoveKey(ctx context.Context, name, access string) error {
	_, err := s.updateUser(ctx, name, func(u *User) error {
		for i, k := range u.Keys {
			if k.Access == access {
				u.Keys = append(u.Keys[:i], u.Keys[i+1:]...)
				return nil
			}
		}
		return fmt.Errorf("%w: %s has no key %s", ErrNoSuchKey, name, access)
	})
	if err != nil {
		return err
	}
	if err := s.io.Delete(ctx, keyObj(access)); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("remove key %s: %w", access, err)
	}
	return nil
}

// LookupKey returns the user owning an access key and its secret.
func (s *Store) LookupKey(ctx context.Context, access string) (User, string, error) {
	if access == "" || len(access) > 128 || strings.ContainsAny(access, "/\x00") {
		return User{}, "", fmt.Errorf("%w: %q", ErrNoSuchKey, access)
	}
	owner, err := s.io.GetXattr(ctx, keyObj(access), keyAttr)
	if errors.Is(err, rados.ErrNotFound) || errors.Is(err, rados.ErrNoAttr) {
		return User{}, "", fmt.Errorf("%w: %s", ErrNoSuchKey, access)
	}
	if err != nil {
		return User{}, "", fmt.Errorf("access key %s: %w", access, err)
	}
	u, err := s.GetUser(ctx, string(owner))
	if errors.Is(err, ErrNoSuchUser) {
		return User{}, "", fmt.Errorf("%w: %s (its user is gone)", ErrNoSuchKey, access)
	}
	if err != nil {
		return User{}, "", err
	}
	for _, k := range u.Keys {
		if k.Access == access {
			return u, k.Secret, nil
		}
	}
	return User{}, "", fmt.Errorf("%w: %s (removed)", ErrNoSuchKey, access)
}

// CreateBucket creates a bucket owned by owner with the given ACL; opts
// set more of its record (its ownership controls...).
func (s *Store) CreateBucket(ctx context.Context, name, owner, region string, acl ACL, opts ...func(*Bucket)) (Bucket, error) {
	b := Bucket{Name: name, Owner: owner, ID: randomString(8, hex.EncodeToString), Created: s.Now(), Region: region, ACL: acl}
	for _, o := range opts {
		o(&b)
	}
	w := rados.NewWriteOp()
	w.Create(true)
	w.SetXattr(bucketAttr, b.Encode())
	err := s.io.OperateWrite(ctx, bucketObj(name), w)
	if errors.Is(err, rados.ErrExists) {
		old, gerr := s.GetBucket(ctx, name)
		if gerr == nil && old.Owner == owner {
			return old, fmt.Errorf("%w: %s", ErrBucketOwned, name)
		}
		return Bucket{}, fmt.Errorf("%w: %s", ErrBucketExists, name)
	}
	if err != nil {
		return Bucket{}, fmt.Errorf("create bucket %s: %w", name, err)
	}
	if _, err := s.Index(ctx, b); err != nil {
		return Bucket{}, err
	}
	if err := s.io.SetOmap(ctx, userObj(owner), map[string][]byte{name: nil}); err != nil {
		return Bucket{}, fmt.Errorf("create bucket %s: list it under %s: %w", name, owner, err)
	}
	return b, nil
}

// GetBucket returns a bucket's record.
func (s *Store) GetBucket(ctx context.Context, name string) (Bucket, error) {
	b, _, err := s.getBucket(ctx, name)
	return b, err
}

// getBucket returns a bucket's record and its stored bytes (for a
// compare-and-write).
func (s *Store) getBucket(ctx context.Context, name string) (Bucket, []byte, error) {
	raw, err := s.io.GetXattr(ctx, bucketObj(name), bucketAttr)
	if errors.Is(err, rados.ErrNotFound) || errors.Is(err, rados.ErrNoAttr) {
		return Bucket{}, nil, fmt.Errorf("%w: %s", ErrNoSuchBucket, name)
	}
	if err != nil {
		return Bucket{}, nil, fmt.Errorf("bucket %s: %w", name, err)
	}
	b, err := DecodeBucket(raw)
	return b, raw, err
}

// SetBucketACL replaces the ACL of bucket b.
func (s *Store) SetBucketACL(ctx context.Context, b Bucket, acl ACL) (Bucket, error) {
	return s.updateBucket(ctx, b, func(cur *Bucket) { cur.ACL = acl })
}

// SetBucketPolicy replaces the policy of bucket b ("" removes it).
func (s *Store) SetBucketPolicy(ctx context.Context, b Bucket, policy string) (Bucket, error) {
	if len(policy) > MaxPolicy {
		return Bucket{}, fmt.Errorf("bucket %s: a policy of %d bytes (at most %d)", b.Name, len(policy), MaxPolicy)
	}
	return s.updateBucket(ctx, b, func(cur *Bucket) { cur.Policy = policy })
}

// SetBucketTags replaces the tag set of bucket b (nil removes it).
func (s *Store) SetBucketTags(ctx context.Context, b Bucket, tags []Tag) (Bucket, error) {
	if len(tags) > maxTags {
		return Bucket{}, fmt.Errorf("bucket %s: %d tags (at most %d)", b.Name, len(tags), maxTags)
	}
	return s.updateBucket(ctx, b, func(cur *Bucket) { cur.Tags = tags })
}

// SetBucketCORS replaces the CORS configuration of bucket b (nil removes
// it).
func (s *Store) SetBucketCORS(ctx context.Context, b Bucket, rules []CORSRule) (Bucket, error) {
	if len(rules) > MaxCORSRules {
		return Bucket{}, fmt.Errorf("bucket %s: %d CORS rules (at most %d)", b.Name, len(rules), MaxCORSRules)
	}
	return s.updateBucket(ctx, b, func(cur *Bucket) { cur.CORS = rules })
}

// updateBucket applies f to the record of bucket b (the same bucket: a
// bucket deleted and created again under its name is ErrNoSuchBucket)
// with a compare-and-write, so a concurrent change is not lost.
func (s *Store) updateBucket(ctx context.Context, b Bucket, f func(*Bucket)) (Bucket, error) {
	for attempt := 0; attempt < 5; attempt++ {
		cur, raw, err := s.getBucket(ctx, b.Name)
		if err != nil {
			return Bucket{}, err
		}
		if cur.ID != b.ID {
			return Bucket{}, fmt.Errorf("%w: %s (deleted and created again)", ErrNoSuchBucket, b.Name)
		}
		f(&cur)
		w := rados.NewWriteOp()
		w.CmpXattr(bucketAttr, rados.CmpEq, raw)
		w.SetXattr(bucketAttr, cur.Encode())
		err = s.io.OperateWrite(ctx, bucketObj(b.Name), w)
		if errors.Is(err, rados.ErrCompareFailed) {
			continue
		}
		if errors.Is(err, rados.ErrNotFound) {
			return Bucket{}, fmt.Errorf("%w: %s", ErrNoSuchBucket, b.Name)
		}
		if err != nil {
			return Bucket{}, fmt.Errorf("update bucket %s: %w", b.Name, err)
		}
		return cur, nil
	}
	return Bucket{}, fmt.Errorf("%w: bucket %s", ErrConflict, b.Name)
}

// ListBuckets returns the buckets owner owns, by name.
func (s *Store) ListBuckets(ctx context.Context, owner string) ([]Bucket, error) {
	var out []Bucket
	after := ""
	for {
		kvs, more, err := s.io.GetOmapValues(ctx, userObj(owner), after, "", 1000)
		if err != nil {
			return nil, fmt.Errorf("list buckets of %s: %w", owner, err)
		}
		for _, p := range kvs {
			after = p.Key
			b, err := s.GetBucket(ctx, p.Key)
			if errors.Is(err, ErrNoSuchBucket) {
				continue // a delete that stopped half way
			}
			if err != nil {
				return nil, err
			}
			if b.Owner == owner {
				out = append(out, b)
			}
		}
		if !more || len(kvs) == 0 {
			return out, nil
		}
	}
}

// Index opens (creating if need be) a bucket's index.
func (s *Store) Index(ctx context.Context, b Bucket) (*Index, error) {
	s.mu.Lock()
	ix := s.indexes[b.ID]
	s.mu.Unlock()
	if ix != nil {
		return ix, nil
	}
	st, err := kv.Open(ctx, s.io, indexName(b.ID), s.kvc)
	if errors.Is(err, kv.ErrNotFound) {
		st, err = kv.Create(ctx, s.io, indexName(b.ID), kv.Options{}, s.kvc)
		if errors.Is(err, kv.ErrExists) {
			st, err = kv.Open(ctx, s.io, indexName(b.ID), s.kvc)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bucket %s: index: %w", b.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.indexes[b.ID]; old != nil {
		return old, nil
	}
	ix = &Index{kv: st}
	s.indexes[b.ID] = ix
	return ix, nil
}

// removeBucketRecord removes b's record if it is still b's (the same
// id: not a bucket created again under the name); a change of its ACL
// meanwhile does not stop it.
func (s *Store) removeBucketRecord(ctx context.Context, b Bucket) error {
	for attempt := 0; attempt < 5; attempt++ {
		cur, raw, err := s.getBucket(ctx, b.Name)
		if err != nil {
			return err
		}
		if cur.ID != b.ID {
			return fmt.Errorf("%w: %s", ErrNoSuchBucket, b.Name)
		}
		w := rados.NewWriteOp()
		w.CmpXattr(bucketAttr, rados.CmpEq, raw)
		w.Remove()
		err = s.io.OperateWrite(ctx, bucketObj(b.Name), w)
		if errors.Is(err, rados.ErrCompareFailed) {
			continue
		}
		if errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("%w: %s", ErrNoSuchBucket, b.Name)
		}
		if err != nil {
			return fmt.Errorf("delete bucket %s: %w", b.Name, err)
		}
		return nil
	}
	return fmt.Errorf("%w: bucket %s", ErrConflict, b.Name)
}

// DeleteBucket removes an empty bucket and its index.
func (s *Store) DeleteBucket(ctx context.Context, b Bucket) error {
	ix, err := s.Index(ctx, b)
	if err != nil {
		return err
	}
	got, _, err := ix.List(ctx, "", "", 1)
	if err != nil {
		return err
	}
	if len(got) > 0 {
		name, _ := splitVersionKey(got[0].Key) // a version, maybe
		return fmt.Errorf("%w: %s holds %s", ErrBucketNotEmpty, b.Name, name)
	}
	ups, _, err := s.ListUploads(ctx, b, "", "", 1)
	if err != nil {
		return err
	}
	if len(ups) > 0 {
		return fmt.Errorf("%w: %s has multipart upload %s in progress", ErrBucketNotEmpty, b.Name, ups[0].ID)
	}
	if err := s.removeBucketRecord(ctx, b); err != nil {
		return err
	}
	if err := s.io.RmOmapKeys(ctx, userObj(b.Owner), b.Name); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("delete bucket %s: unlist it: %w", b.Name, err)
	}
	s.mu.Lock()
	delete(s.indexes, b.ID)
	s.mu.Unlock()
	for _, l := range ix.kv.Leaves() {
		if err := s.io.Delete(ctx, l.Leaf); err != nil && !errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("delete bucket %s: index leaf: %w", b.Name, err)
		}
	}
	for _, o := range []string{"kv." + indexName(b.ID) + ".index", uploadsObj(b.ID), leaseObj(b.ID)} {
		if err := s.io.Delete(ctx, o); err != nil && !errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("delete bucket %s: %s: %w", b.Name, o, err)
		}
	}
	return nil
}

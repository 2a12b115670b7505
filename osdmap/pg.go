package osdmap

import (
	"cmp"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// PG names a placement group: a pool and a placement seed (Ceph's pg_t).
// A PG whose Seed is a full object hash, not yet reduced modulo the
// pool's pg_num, is a "raw" PG; Pool.RawPGToPG reduces it.
type PG struct {
	Pool int64
	Seed uint32
}

// String formats pg as Ceph does: the pool in decimal, a dot, the seed in
// hex ("1.1f").
func (pg PG) String() string {
	return strconv.FormatInt(pg.Pool, 10) + "." + strconv.FormatUint(uint64(pg.Seed), 16)
}

// ParsePG parses the form String prints.
func ParsePG(s string) (PG, error) {
	pool, seed, ok := strings.Cut(s, ".")
	if !ok {
		return PG{}, fmt.Errorf("osdmap: pg %q: want POOL.SEED", s)
	}
	p, err := strconv.ParseInt(pool, 10, 64)
	if err != nil || p < 0 {
		return PG{}, fmt.Errorf("osdmap: pg %q: bad pool id", s)
	}
	ps, err := strconv.ParseUint(seed, 16, 32)
	if err != nil {
		return PG{}, fmt.Errorf("osdmap: pg %q: bad seed (hex)", s)
	}
	return PG{Pool: p, Seed: uint32(ps)}, nil
}

// MarshalText implements encoding.TextMarshaler, so PGs print as "1.1f"
// in JSON, also as map keys.
func (pg PG) MarshalText() ([]byte, error) { return []byte(pg.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (pg *PG) UnmarshalText(b []byte) error {
	p, err := ParsePG(string(b))
	if err != nil {
		return err
	}
	*pg = p
	return nil
}

// ComparePG orders PGs by pool, then seed.
func ComparePG(a, b PG) int {
	if c := cmp.Compare(a.Pool, b.Pool); c != 0 {
		return c
	}
	return cmp.Compare(a.Seed, b.Seed)
}

// StableMod is Ceph's ceph_stable_mod: x reduced to [0, b) using the mask
// bmask = (1 << bits(b-1)) - 1, such that growing b only moves the values
// that must move (the basis of PG splitting).
func StableMod(x, b, bmask uint32) uint32 {
	if x&bmask < b {
		return x & bmask
	}
	return x & (bmask >> 1)
}

// PGMask returns the mask StableMod needs for n placement groups:
// (1 << bits(n-1)) - 1, as Ceph's pg_pool_t::calc_pg_masks.
func PGMask(n uint32) uint32 {
	if n == 0 {
		return 0
	}
	return uint32(1)<<bits.Len32(n-1) - 1
}

// SplitBits returns how many low hash bits select PG seed's objects with
// pgNum PGs (Ceph's pg_t::get_split_bits): an object is in the PG exactly
// when its hash's low SplitBits bits equal seed. With pgNum a power of two
// every PG has the same number; otherwise the PGs whose sibling (seed plus
// half the mask) does not exist yet keep one bit fewer, holding twice the
// hashes.
func SplitBits(seed, pgNum uint32) uint8 {
	if pgNum <= 1 {
		return 0
	}
	k := uint8(bits.Len32(pgNum - 1)) // the mask has k bits
	half := uint32(1) << (k - 1)
	if seed < half && seed+half >= pgNum {
		return k - 1
	}
	return k
}

// BitwiseRange returns the reversed hashes (objid's BitwiseKey) of PG
// seed's objects with pgNum PGs: the range [start, end), end at most
// 1<<32. Objects sort by reversed hash, and a PG's hashes share their low
// SplitBits bits, so each PG holds one contiguous stretch of that order and
// the PGs' stretches tile it. A split cuts a PG's stretch in parts and a
// merge joins them: a position in that order stays meaningful across both
// (the basis of a pool listing that neither repeats nor skips objects).
func BitwiseRange(seed, pgNum uint32) (start, end uint64) {
	start = uint64(bits.Reverse32(seed))
	return start, start + 1<<(32-SplitBits(seed, pgNum))
}

package objid

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

// TestStrHashCephVectors replays the ceph_str_hash_rjenkins values of
// hash_vectors.json, which were checked against Ceph 16.2.15's osdmaptool.
func TestStrHashCephVectors(t *testing.T) {
	data := crushvectors.ReadFile(t, "hash_vectors.json")
	var v struct {
		Str struct {
			Vectors []struct {
				Name string `json:"name"`
				Hash uint32 `json:"ceph_str_hash_rjenkins"`
				PS   uint32 `json:"osdmaptool_ps_at_pg_num_2^30"`
			} `json:"vectors"`
		} `json:"ceph_str_hash_rjenkins"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Str.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, c := range v.Str.Vectors {
		if got := StrHash(c.Name); got != c.Hash {
			t.Errorf("StrHash(%q) = %d, want %d", c.Name, got, c.Hash)
		}
		if got := Object(1, "", c.Name).Hash & (1<<30 - 1); got != c.PS {
			t.Errorf("%q: low 30 bits %d, want %d", c.Name, got, c.PS)
		}
	}
}

// TestHashLocatorMatchesConcatenation checks the streaming hash against
// hashing the concatenated string, across every block boundary.
func TestHashLocatorMatchesConcatenation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for nsLen := 0; nsLen < 30; nsLen++ {
		for keyLen := 0; keyLen < 30; keyLen++ {
			ns, key := randString(r, nsLen), randString(r, keyLen)
			want := StrHash(key)
			if ns != "" {
				want = StrHash(ns + "\x1f" + key)
			}
			if got := HashLocator(ns, key); got != want {
				t.Fatalf("HashLocator(%q, %q) = %d, want %d", ns, key, got, want)
			}
		}
	}
}

func TestNewUsesKeyAsLocator(t *testing.T) {
	a := New(1, "ns", "shared", "a", NoSnap)
	b := New(1, "ns", "shared", "b", NoSnap)
	if a.Hash != b.Hash || a.Hash != HashLocator("ns", "shared") {
		t.Fatalf("objects with the same key hash differently: %x %x", a.Hash, b.Hash)
	}
	if Object(1, "", "foo").Hash != StrHash("foo") {
		t.Fatal("a name without namespace or key should hash alone")
	}
}

func randString(r *rand.Rand, n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteByte(byte(r.IntN(256)))
	}
	return sb.String()
}

func BenchmarkStrHash(b *testing.B) {
	name := "rbd_data.5f2a6b8b4567.0000000000000000"
	for b.Loop() {
		StrHash(name)
	}
}

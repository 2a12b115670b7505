package crush

import (
	"fmt"
	"slices"
)

// Tunables are the map-wide knobs of the mapper. Each profile fixes an
// older behaviour of Ceph's CRUSH so that old maps keep mapping as they did.
type Tunables struct {
	// ChooseLocalTries is how often a collision is retried in the same
	// bucket before the descent restarts (legacy: 2).
	ChooseLocalTries uint32
	// ChooseLocalFallbackTries is how often a bucket is searched
	// exhaustively, ignoring weights, before the descent restarts
	// (legacy: 5).
	ChooseLocalFallbackTries uint32
	// ChooseTotalTries bounds the retries of one choice (legacy: 19).
	ChooseTotalTries uint32
	// ChooseleafDescendOnce makes chooseleaf try the leaf descent once,
	// retrying from the top on failure, instead of retrying inside.
	ChooseleafDescendOnce uint32
	// ChooseleafVaryR varies the leaf descent's r with the parent's r
	// (r >> (vary_r-1)), so a retried parent gives a different leaf.
	ChooseleafVaryR uint32
	// ChooseleafStable stops a firstn leaf choice depending on its position,
	// so growing the replica count moves less data.
	ChooseleafStable uint32
	// StrawCalcVersion selects the straw length calculation of legacy straw
	// buckets (0 has a bug with repeated weights; 1 fixes it).
	StrawCalcVersion uint32
	// AllowedBucketAlgs is a bit mask (1<<Alg) of the algorithms new
	// buckets may use; 22 allows uniform, list and straw, 54 adds straw2.
	AllowedBucketAlgs uint32
}

const (
	legacyAllowedAlgs  = 1<<AlgUniform | 1<<AlgList | 1<<AlgStraw
	currentAllowedAlgs = legacyAllowedAlgs | 1<<AlgStraw2
)

// The named profiles. "default" and "optimal" are jewel, as in Ceph since
// Jewel; "legacy" is argonaut, which is also what a text map without
// tunable lines gets.
var profiles = []struct {
	name string
	t    Tunables
}{
	{"legacy", Tunables{2, 5, 19, 0, 0, 0, 0, legacyAllowedAlgs}},
	{"argonaut", Tunables{2, 5, 19, 0, 0, 0, 0, legacyAllowedAlgs}},
	{"bobtail", Tunables{0, 0, 50, 1, 0, 0, 0, legacyAllowedAlgs}},
	{"firefly", Tunables{0, 0, 50, 1, 1, 0, 0, legacyAllowedAlgs}},
	{"hammer", Tunables{0, 0, 50, 1, 1, 0, 1, currentAllowedAlgs}},
	{"jewel", Tunables{0, 0, 50, 1, 1, 1, 1, currentAllowedAlgs}},
	{"optimal", Tunables{0, 0, 50, 1, 1, 1, 1, currentAllowedAlgs}},
	{"default", Tunables{0, 0, 50, 1, 1, 1, 1, currentAllowedAlgs}},
}

// ProfileNames lists the named tunable profiles.
func ProfileNames() []string {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.name
	}
	return names
}

// Profile returns the tunables of the named profile.
func Profile(name string) (Tunables, error) {
	i := slices.IndexFunc(profiles, func(p struct {
		name string
		t    Tunables
	}) bool {
		return p.name == name
	})
	if i < 0 {
		return Tunables{}, fmt.Errorf("crush: unknown tunables profile %q", name)
	}
	return profiles[i].t, nil
}

// LegacyTunables returns the argonaut tunables.
func LegacyTunables() Tunables { return profiles[0].t }

// DefaultTunables returns the tunables of the default profile (jewel).
func DefaultTunables() Tunables { return profiles[len(profiles)-1].t }

// ProfileName names the oldest release whose profile t matches exactly,
// or "unknown". Ceph reports the same for "ceph osd crush show-tunables".
func (t Tunables) ProfileName() string {
	for _, p := range profiles[1:] { // skip "legacy", an alias of argonaut
		if p.t == t {
			return p.name
		}
	}
	return "unknown"
}

package crush

import (
	"fmt"
	"strings"
)

// Alg is a bucket's selection algorithm. The values are Ceph's.
type Alg uint8

// The bucket algorithms, numbered as in Ceph.
const (
	AlgUniform Alg = 1
	AlgList    Alg = 2
	AlgTree    Alg = 3
	AlgStraw   Alg = 4
	AlgStraw2  Alg = 5
)

var algNames = [...]string{AlgUniform: "uniform", AlgList: "list", AlgTree: "tree", AlgStraw: "straw", AlgStraw2: "straw2"}

func (a Alg) String() string {
	if a.valid() {
		return algNames[a]
	}
	return fmt.Sprintf("alg(%d)", uint8(a))
}

func (a Alg) valid() bool { return a >= AlgUniform && a <= AlgStraw2 }

// ParseAlg returns the algorithm named s ("uniform", "list", "tree",
// "straw" or "straw2").
func ParseAlg(s string) (Alg, error) {
	for a, name := range algNames {
		if name != "" && name == s {
			return Alg(a), nil
		}
	}
	return 0, fmt.Errorf("crush: unknown bucket algorithm %q", s)
}

// HashRjenkins1 is the only hash CRUSH defines (Bucket.Hash).
const HashRjenkins1 = 0

// ItemNone marks an indep result slot that could not be filled
// (Ceph's CRUSH_ITEM_NONE).
const ItemNone int32 = 0x7fffffff

// itemUndef marks an indep slot not yet chosen (CRUSH_ITEM_UNDEF).
const itemUndef int32 = 0x7ffffffe

// WeightOne is a weight of 1.0 in CRUSH's 16.16 fixed point.
const WeightOne = 0x10000

// Op is a rule step's operation. The values are Ceph's.
type Op uint8

// Rule step operations, numbered as in Ceph.
const (
	OpNoop                        Op = 0
	OpTake                        Op = 1
	OpChooseFirstN                Op = 2
	OpChooseIndep                 Op = 3
	OpEmit                        Op = 4
	OpChooseLeafFirstN            Op = 6
	OpChooseLeafIndep             Op = 7
	OpSetChooseTries              Op = 8
	OpSetChooseLeafTries          Op = 9
	OpSetChooseLocalTries         Op = 10
	OpSetChooseLocalFallbackTries Op = 11
	OpSetChooseLeafVaryR          Op = 12
	OpSetChooseLeafStable         Op = 13
)

var opNames = [...]string{
	OpNoop: "noop", OpTake: "take", OpChooseFirstN: "choose_firstn",
	OpChooseIndep: "choose_indep", OpEmit: "emit",
	OpChooseLeafFirstN: "chooseleaf_firstn", OpChooseLeafIndep: "chooseleaf_indep",
	OpSetChooseTries: "set_choose_tries", OpSetChooseLeafTries: "set_chooseleaf_tries",
	OpSetChooseLocalTries:         "set_choose_local_tries",
	OpSetChooseLocalFallbackTries: "set_choose_local_fallback_tries",
	OpSetChooseLeafVaryR:          "set_chooseleaf_vary_r",
	OpSetChooseLeafStable:         "set_chooseleaf_stable",
}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

func (o Op) valid() bool { return int(o) < len(opNames) && opNames[o] != "" }

// IsChoose reports whether o is one of the four choose steps.
func (o Op) IsChoose() bool {
	return o == OpChooseFirstN || o == OpChooseIndep || o == OpChooseLeafFirstN || o == OpChooseLeafIndep
}

// RuleType says what kind of pool a rule is for. The values are Ceph's.
type RuleType uint8

// Rule types, numbered as in Ceph.
const (
	RuleReplicated RuleType = 1
	RuleErasure    RuleType = 3
)

func (t RuleType) String() string {
	switch t {
	case RuleReplicated:
		return "replicated"
	case RuleErasure:
		return "erasure"
	}
	return fmt.Sprintf("%d", uint8(t))
}

// Device is a leaf of the hierarchy: one OSD.
type Device struct {
	ID    int32  // >= 0
	Name  string // e.g. "osd.3"
	Class string // device class, e.g. "hdd"; empty for none
}

// BucketType names a level of the hierarchy (type 0 is the device level).
type BucketType struct {
	ID   int32
	Name string
}

// DefaultTypes returns Ceph's default list of bucket types.
func DefaultTypes() []BucketType {
	names := []string{"osd", "host", "chassis", "rack", "row", "pdu", "pod", "room", "datacenter", "zone", "region", "root"}
	types := make([]BucketType, len(names))
	for i, n := range names {
		types[i] = BucketType{ID: int32(i), Name: n}
	}
	return types
}

// Bucket is an interior node of the hierarchy.
type Bucket struct {
	ID   int32 // < 0
	Name string
	Type int32 // a BucketType ID, > 0
	Alg  Alg
	Hash uint8 // HashRjenkins1

	// Items are device ids (>= 0) and bucket ids (< 0), in order; the order
	// matters to every algorithm.
	Items []int32
	// Weights holds each item's weight in 16.16 fixed point. For a bucket
	// item this is the weight the parent gives it, which need not equal the
	// child's own total. Uniform buckets require equal weights.
	Weights []uint32

	// ClassIDs fixes the ids of this bucket's shadow copies, by device
	// class (the "id -N class C" lines of the text form). Missing entries
	// are allocated by New, as Ceph does.
	ClassIDs map[string]int32

	// Set by New on shadow buckets only: the bucket this one shadows and
	// the device class it holds.
	ShadowOf int32
	Class    string

	// Derived by New.
	weight  uint32   // sum of Weights
	sums    []uint32 // list: running sum of Weights up to and including i
	nodes   []uint32 // tree: node weights
	straws  []uint32 // straw: straw lengths
	nodeCnt int32    // tree: number of nodes
}

// Weight returns the bucket's total weight in 16.16 fixed point.
func (b *Bucket) Weight() uint32 { return b.weight }

// IsShadow reports whether b is a device-class shadow bucket.
func (b *Bucket) IsShadow() bool { return b.Class != "" }

// Step is one step of a rule.
type Step struct {
	Op   Op
	Arg1 int32 // take: item id; choose: count (<= 0 means result size + Arg1); set_*: value
	Arg2 int32 // choose: bucket type id
	// Class restricts a take step to a device class: New replaces Arg1 by
	// the id of the bucket's shadow for that class.
	Class string
}

// Rule is a placement rule: a little program of steps.
type Rule struct {
	ID      int32
	Name    string
	Type    RuleType
	MinSize int32 // informational, as in Ceph since Luminous
	MaxSize int32
	Steps   []Step
}

// ChooseArg overrides one bucket's straw2 inputs: the ids hashed in place
// of the items' ids, and per-position weight sets.
type ChooseArg struct {
	BucketID int32
	IDs      []int32    // optional; len(Items) when set
	Weights  [][]uint32 // optional; each len(Items); one per result position
}

// ChooseArgsCompat is the index of the compat weight set, used when no set
// exists for a pool (Ceph prints it as 18446744073709551615).
const ChooseArgsCompat int64 = -1

// Spec describes a map; New validates it and builds the read-only Map.
// Shadow buckets are not part of a Spec: New derives them from the device
// classes.
type Spec struct {
	Tunables Tunables
	Devices  []Device
	Types    []BucketType
	Buckets  []Bucket
	Rules    []Rule
	// ChooseArgs holds weight sets by index (a pool id or
	// ChooseArgsCompat). They may name shadow buckets.
	ChooseArgs map[int64][]ChooseArg
}

// shadowName is the name Ceph gives a bucket's shadow for class c.
func shadowName(name, class string) string { return name + "~" + class }

// splitShadowName splits "host0~ssd" into its parts.
func splitShadowName(s string) (name, class string, ok bool) {
	return strings.Cut(s, "~")
}

package rados

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/osdmap"
)

// This file decides where a read goes under a read policy (docs/OSD.md,
// "Reading from replicas"; issue 42's Algorithm 1, osdChoice): the
// primary, an acting member at random (balance), or the member with the
// largest P_i x Random_i (score), where P_i weighs the member's network
// distance from the client and its disk, CPU and memory load as the
// monitors published them. The objecter (objecter.go) sends; a replica
// that is not current for the read answers ENOTCURRENT, and the objecter
// sends it to the primary.

// ScoreWeights are the weights of read_policy score's P_i = w1 x
// distance + w2 x disk + w3 x CPU + w4 x memory, each term in [0, 1]
// with 1 the best (the same host; an idle disk, CPU, memory). The zero
// ScoreWeights means the defaults of the client_read_score_weight_*
// options (docs/CONFIG.md).
type ScoreWeights struct {
	Distance, Disk, CPU, Memory float64
}

// Option names of the read policy's settings, in the config schema.
const (
	optReadPolicy     = "client_read_policy"
	optCrushLocation  = "crush_location"
	optWeightDistance = "client_read_score_weight_distance"
	optWeightDisk     = "client_read_score_weight_disk"
	optWeightCPU      = "client_read_score_weight_cpu"
	optWeightMemory   = "client_read_score_weight_memory"
)

// defaultWeights are the schema's defaults.
func defaultWeights() ScoreWeights {
	get := func(name string) float64 {
		o, ok := config.Lookup(name)
		if !ok {
			return 0
		}
		f, _ := strconv.ParseFloat(o.Default, 64)
		return f
	}
	return ScoreWeights{Distance: get(optWeightDistance), Disk: get(optWeightDisk), CPU: get(optWeightCPU), Memory: get(optWeightMemory)}
}

func (w ScoreWeights) validate() error {
	for _, f := range []float64{w.Distance, w.Disk, w.CPU, w.Memory} {
		if f < 0 || f > 1000 || f != f {
			return fmt.Errorf("%w: read score weights %+v: each must be in [0, 1000]", ErrInvalid, w)
		}
	}
	return nil
}

// parseReadPolicy parses Config.ReadPolicy: "" or "pool" (the pool's),
// or a policy that overrides every pool's.
func parseReadPolicy(s string) (osdmap.ReadPolicy, bool, error) {
	if s == "" || s == "pool" {
		return 0, false, nil
	}
	r, err := osdmap.ParseReadPolicy(s)
	if err != nil {
		return 0, false, fmt.Errorf("%w: read policy %q: want pool, primary, balance or score", ErrInvalid, s)
	}
	return r, true, nil
}

// location is a CRUSH location, bucket type to bucket name ("host" to
// "node1"), as Ceph's crush_location option writes it: "host=node1
// rack=r1".
type location map[string]string

// parseLocation parses "type=name" pairs separated by spaces or commas.
func parseLocation(s string) (location, error) {
	loc := location{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%w: crush location %q: want type=name pairs, e.g. host=node1 rack=r1", ErrInvalid, s)
		}
		loc[k] = v
	}
	return loc, nil
}

// distance scores how near an OSD at loc is to a client at client: 1 on
// the same host, 0.5 in the same rack, 0 otherwise (or when the client
// gave no location).
func distance(client, loc location) float64 {
	switch {
	case client["host"] != "" && client["host"] == loc["host"]:
		return 1
	case client["rack"] != "" && client["rack"] == loc["rack"]:
		return 0.5
	}
	return 0
}

// locations finds each OSD's CRUSH location in c: the names of the
// buckets above it, by type. Shadow buckets (device classes) are skipped.
func locations(c *crush.Map) map[int32]location {
	out := map[int32]location{}
	if c == nil {
		return out
	}
	parent := map[int32]int32{}
	for _, b := range c.Buckets() {
		if b.ShadowOf != 0 {
			continue
		}
		for _, it := range b.Items {
			parent[it] = b.ID
		}
	}
	for _, d := range c.Devices() {
		loc := location{}
		for id, ok := parent[d.ID], true; ok; id, ok = parent[id] {
			if b := c.Bucket(id); b != nil {
				loc[c.TypeName(b.Type)] = b.Name
			}
			if len(loc) > 16 {
				break // a cycle cannot be built, but stay bounded
			}
		}
		out[d.ID] = loc
	}
	return out
}

// score is P_i for an OSD with load l at distance dist.
func (w ScoreWeights) score(dist float64, l osdmap.Load) float64 {
	free := func(pct uint8) float64 { return 1 - float64(pct)/100 }
	return w.Distance*dist + w.Disk*free(l.Disk) + w.CPU*free(l.CPU) + w.Memory*free(l.Memory)
}

// readChoice is what chooseReader decides from: the candidates (the
// acting members that are up, the primary first) with their distance
// from the client and their load.
type readChoice struct {
	osd  int32
	dist float64
	load osdmap.Load
}

// chooseReader picks where a read goes under policy among cands (not
// empty; cands[0] the primary), drawing from rnd: the primary, a member
// at random, or the member with the largest P_i x Random_i.
func chooseReader(policy osdmap.ReadPolicy, cands []readChoice, w ScoreWeights, rnd *rand.Rand) int32 {
	switch policy {
	case osdmap.ReadBalance:
		return cands[rnd.IntN(len(cands))].osd
	case osdmap.ReadScore:
		best, bestV := cands[0].osd, -1.0
		for _, c := range cands {
			v := w.score(c.dist, c.load) * (1 - rnd.Float64()) // Random_i in (0, 1]
			if v > bestV {
				best, bestV = c.osd, v
			}
		}
		return best
	}
	return cands[0].osd
}

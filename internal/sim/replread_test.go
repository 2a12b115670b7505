package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/cuttlestore/cuttle/rados"
)

// connectWith connects a client as connect does, with edit applied to its
// config (a read policy, a CRUSH location).
func (c *Cluster) connectWith(t *testing.T, name string, seed uint64, edit func(*rados.Config)) *rados.Conn {
	t.Helper()
	var mons []string
	for _, mi := range c.monmap.Mons {
		mons = append(mons, mi.Name+"="+mi.Addr)
	}
	cfg := rados.Config{Mons: mons, Name: name, Auth: "none", Network: c.network(name), Logger: Logger(name), Seed: seed}
	edit(&cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := rados.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// registerIn and registerOut are a history's operations on one object
// for porcupine's register model: a write of a value, or a read.
type registerIn struct {
	key   string
	write bool
	value string
}

type registerOut struct {
	value string
}

// registerModel is a set of registers, one per key, each starting
// absent (""): every read returns the last value written before it.
var registerModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(registerIn).key
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		var out [][]porcupine.Operation
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, in, out any) (bool, any) {
		i := in.(registerIn)
		if i.write {
			return true, i.value
		}
		return out.(registerOut).value == state.(string), state
	},
}

// replReadRun is one run of TestReplicaReads* : what the clients did and
// saw.
type replReadRun struct {
	history  []porcupine.Operation
	ryw      []string // read-your-writes violations
	monotone []string // a client's reads of a key going back in version
	served   float64  // balanced reads replicas served
	refused  float64  // and refused (the primary answered them)
}

// runReplicaReads runs writers and readers at once on a pool of three
// OSDs with read_policy policy and ack mode ack: writers write shared
// keys (the linearizability check) and a key of their own that they read
// back after each write (read-your-writes, exactly, as no one else writes
// it); readers read the shared keys. Every op is timed by one sequence
// counter, an order real time respects.
func runReplicaReads(t *testing.T, policy, ack string, seed uint64) replReadRun {
	var run replReadRun
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		if ack != "all" {
			setAck(t, c, ack)
		}
		c.Run("osd pool set", "pool", "rbd", "var", "read_policy", "val", policy)
		c.WaitForEpoch(c.Epoch())
		ctx := context.Background()
		var (
			seq atomic.Int64
			mu  sync.Mutex
			wg  sync.WaitGroup
		)
		record := func(op porcupine.Operation) {
			mu.Lock()
			run.history = append(run.history, op)
			mu.Unlock()
		}
		complain := func(list *[]string, f string, args ...any) {
			mu.Lock()
			*list = append(*list, fmt.Sprintf(f, args...))
			mu.Unlock()
		}
		shared := []string{"k0", "k1", "k2", "k3"}
		const writers, readers, writes, reads = 3, 3, 12, 24
		hosts := []string{"h1", "h2", "h3"}
		for w := range writers {
			conn := c.connectWith(t, fmt.Sprintf("client.w%d", w), seed+uint64(w), func(cfg *rados.Config) {
				cfg.CrushLocation = "host=" + hosts[w%3]
			})
			io, err := conn.OpenIOContext("rbd")
			if err != nil {
				t.Fatal(err)
			}
			own := fmt.Sprintf("own%d", w)
			wg.Go(func() {
				for j := range writes {
					key := shared[(w+j)%len(shared)]
					val := fmt.Sprintf("w%d-%d", w, j)
					call := seq.Add(1)
					if err := io.WriteFull(ctx, key, []byte(val)); err != nil {
						t.Errorf("write %s=%s: %v", key, val, err)
						return
					}
					record(porcupine.Operation{ClientId: w, Input: registerIn{key: key, write: true, value: val},
						Call: call, Output: registerOut{}, Return: seq.Add(1)})
					if err := io.WriteFull(ctx, own, []byte(val)); err != nil {
						t.Errorf("write %s: %v", own, err)
						return
					}
					got, err := io.Read(ctx, own, 0, 0)
					if err != nil || string(got) != val {
						complain(&run.ryw, "client.w%d read %s = %q (%v) after writing %q", w, own, got, err, val)
					}
				}
			})
		}
		for r := range readers {
			conn := c.connectWith(t, fmt.Sprintf("client.r%d", r), seed+100+uint64(r), func(cfg *rados.Config) {
				cfg.CrushLocation = "host=" + hosts[r%3]
			})
			io, err := conn.OpenIOContext("rbd")
			if err != nil {
				t.Fatal(err)
			}
			id := writers + r
			wg.Go(func() {
				last := map[string]uint64{}
				for j := range reads {
					key := shared[(r*7+j)%len(shared)]
					call := seq.Add(1)
					step, comp := io.ReadAsync(ctx, key, 0, 0)
					err := comp.Wait(ctx)
					ret := seq.Add(1)
					val := ""
					switch {
					case errors.Is(err, rados.ErrNotFound):
					case err != nil:
						t.Errorf("read %s: %v", key, err)
						return
					default:
						val = string(step.Data)
						if v := comp.Version(); v < last[key] {
							complain(&run.monotone, "client.r%d read %s at version %d after version %d", r, key, v, last[key])
						} else {
							last[key] = v
						}
					}
					record(porcupine.Operation{ClientId: id, Input: registerIn{key: key}, Call: call,
						Output: registerOut{value: val}, Return: ret})
				}
			})
		}
		wg.Wait()
		for _, o := range c.OSDs {
			run.served += replicaReads(t, o, "served")
			run.refused += replicaReads(t, o, "refused")
		}
	})
	return run
}

// TestReplicaReadsLinearizable: with ack all, reads from replicas under
// read_policy balance and score, among concurrent writers, form a
// linearizable history of each object (porcupine's check against a
// register), every client reads its own writes, and a client's reads of
// an object never go back in version (docs/OSD.md, "Reading from
// replicas"). Some reads must have been served by replicas, or the test
// would prove nothing.
func TestReplicaReadsLinearizable(t *testing.T) {
	for _, policy := range []string{"balance", "score"} {
		t.Run(policy, func(t *testing.T) {
			run := runReplicaReads(t, policy, "all", 11)
			checkReplicaRun(t, run)
			if res := porcupine.CheckOperations(registerModel, run.history); !res {
				t.Fatalf("%s, ack all: the history of %d operations is not linearizable", policy, len(run.history))
			}
		})
	}
}

// TestReplicaReadsAckPrimary: with ack primary a replica may lack writes
// the primary acknowledged, so reads across clients are not linearizable;
// what holds, and is checked, is each client's session: it reads its own
// acknowledged writes and its reads of an object never go back in
// version (docs/OSD.md, "Reading from replicas").
func TestReplicaReadsAckPrimary(t *testing.T) {
	for _, policy := range []string{"balance", "score"} {
		t.Run(policy, func(t *testing.T) {
			checkReplicaRun(t, runReplicaReads(t, policy, "primary", 13))
		})
	}
}

func checkReplicaRun(t *testing.T, run replReadRun) {
	t.Helper()
	if len(run.ryw) > 0 {
		t.Errorf("read-your-writes broken %d times: %s", len(run.ryw), strings.Join(run.ryw, "; "))
	}
	if len(run.monotone) > 0 {
		t.Errorf("reads went back %d times: %s", len(run.monotone), strings.Join(run.monotone, "; "))
	}
	if run.served == 0 {
		t.Errorf("no read was served by a replica (%v refused): the run checked only the primaries", run.refused)
	}
	t.Logf("%d operations; replicas served %v balanced reads and refused %v", len(run.history), run.served, run.refused)
}

// replicaReads is OSD o's count of balanced reads with result.
func replicaReads(t *testing.T, o *OSD, result string) float64 {
	t.Helper()
	fams, err := o.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "cuttle_osd_replica_reads_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// Under read_policy score, published loads steer reads: with one member
// of every PG loaded to the full (osd set-loads, as the monitors publish
// what OSDs report), a client with no CRUSH location scores it P_i = 0
// (no distance term, no free disk, CPU or memory) and the idle members
// 0.6, so it never reads there as a replica; the idle replicas serve.
// Reads are counted where the OSDs served them.
func TestReplicaReadsScoreFollowsLoads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.Run("osd pool set", "pool", "rbd", "var", "read_policy", "val", "score")
		const busy = 2
		c.Run("osd set-loads", "loads", fmt.Sprintf("%d:100/100/100", busy))
		c.WaitForEpoch(c.Epoch())
		if got := c.Map().OSD(busy).Load; got.Disk != 100 {
			t.Fatalf("osd.%d's load %v not in the map", busy, got)
		}
		ctx := context.Background()
		writer, err := c.connect(t, "client.writer").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		// Objects, then one more write to each PG so that the replicas
		// have a watermark above them.
		const objects = 24
		for i := range objects {
			if err := writer.WriteFull(ctx, fmt.Sprintf("o%d", i), []byte("data")); err != nil {
				t.Fatal(err)
			}
		}
		for i := range objects {
			if err := writer.WriteFull(ctx, fmt.Sprintf("o%d", i), []byte("data2")); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 8 {
			if err := writer.WriteFull(ctx, fmt.Sprintf("last%d", i), []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		before := map[int32]float64{}
		for id, o := range c.OSDs {
			before[id] = replicaReads(t, o, "served")
		}
		reader, err := c.connectWith(t, "client.reader", 5, func(*rados.Config) {}).OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			for i := range objects {
				if _, err := reader.Read(ctx, fmt.Sprintf("o%d", i), 0, 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		served := map[int32]float64{}
		total := 0.0
		for id, o := range c.OSDs {
			served[id] = replicaReads(t, o, "served") - before[id]
			total += served[id]
		}
		t.Logf("reads served by replicas: %v", served)
		if total == 0 {
			t.Fatal("no read was served by a replica")
		}
		for id, n := range served {
			if id == busy && n != 0 || id != busy && n == 0 {
				t.Errorf("replica reads served %v: want none at the busy osd.%d, some at every other", served, busy)
			}
		}
	})
}

package journal_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	. "github.com/cuttlestore/cuttle/internal/mds/journal"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
)

// An MDS killed under load: its writer pipelines flushes (FlushAsync,
// one per batch of entries, without waiting; each flush writes its
// objects one at a time) and its client connection
// closes the moment the k-th flush is acknowledged, with later flushes'
// object writes in flight, some delivered to OSDs and some not. Recovery
// through another client replays every acknowledged entry, then a
// prefix of the rest, intact. (Until the blocklist fences a dead MDS,
// the test lets the writes already sent land before it recovers.)
func TestKilledWriterUnderLoad(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const maxDelay = 2 * time.Millisecond
				c := sim.New(t, sim.Options{Net: memnet.Config{Seed: seed, MinDelay: 100 * time.Microsecond, MaxDelay: maxDelay}})
				for _, h := range []string{"h1", "h2", "h3"} {
					c.AddOSD(h)
				}
				c.Run("osd pool create", "pool", "metadata", "pg_num", "8", "size", "3")
				c.WaitForEpoch(c.Epoch())
				conn := c.Client("client.mds.a")
				io, err := conn.OpenIOContext("metadata")
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				rng := rand.New(rand.NewPCG(seed, 5))
				w, err := Create(ctx, Config{IO: io, Ino: ino, Layout: smallLayouts(io.PoolID())[seed%2], MaxInFlight: 1})
				if err != nil {
					t.Fatal(err)
				}
				const batches = 12
				killAt := time.Duration(rng.IntN(40)) * time.Millisecond // the crash point
				var (
					mu      sync.Mutex
					entries [][]byte
					acked   int // entries acknowledged before the kill
					killed  bool
				)
				for b := range batches {
					for i := range 2 + rng.IntN(9) {
						p := payload(rng, fmt.Sprintf("b%d.%d", b, i))
						if _, _, err := w.Append(p); err != nil {
							t.Fatal(err)
						}
						entries = append(entries, p)
					}
					n := len(entries)
					w.FlushAsync(ctx, func(err error) {
						mu.Lock()
						defer mu.Unlock()
						if killed {
							return
						}
						if err != nil {
							t.Errorf("flush %d before the kill: %v", b, err)
							return
						}
						acked = n
					})
				}
				time.Sleep(killAt)
				mu.Lock()
				killed = true
				mu.Unlock()
				conn.Close() // kill -9: the flushes in flight fail, or land
				// Writes sent before the kill arrive within the network's
				// delay (virtual time).
				time.Sleep(10 * maxDelay)
				synctest.Wait()

				io2, err := c.Client("client.mds.b").OpenIOContext("metadata")
				if err != nil {
					t.Fatal(err)
				}
				var got [][]byte
				_, res, err := Recover(ctx, Config{IO: io2, Ino: ino}, func(e Entry) error {
					got = append(got, e.Payload)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(got) < acked || len(got) > len(entries) {
					t.Fatalf("replayed %d entries; %d were acknowledged, %d appended", len(got), acked, len(entries))
				}
				equalEntries(t, "replayed", got, entries[:len(got)])
				t.Logf("killed at %v: %d acknowledged, %d replayed of %d appended; stop: %v", killAt, acked, len(got), len(entries), res.Stop)
			})
		})
	}
}

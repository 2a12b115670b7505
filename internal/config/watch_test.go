package config

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestWatcher runs a Watcher in virtual time against a fake central
// config: the first fetch is applied at once, a change within one
// interval, an unchanged config not again, and a flag keeps winning.
func TestWatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		central := map[string]string{"osd_max_backfills": "2"}
		var fetchErr error
		applied := make(chan Values, 10)
		w := &Watcher{
			Names: []string{"osd_max_backfills", "osd_recovery_max_active"},
			Local: []Layer{{Source: SourceFlag, Values: map[string]string{"osd_recovery_max_active": "8"}}},
			Fetch: func(context.Context) (map[string]string, error) {
				mu.Lock()
				defer mu.Unlock()
				return central, fetchErr
			},
			Apply:    func(v Values) { applied <- v },
			Interval: 5 * time.Second,
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		set := func(m map[string]string, err error) {
			mu.Lock()
			central, fetchErr = m, err
			mu.Unlock()
		}
		expect := func(when string, backfills int64, src Source) {
			t.Helper()
			synctest.Wait()
			select {
			case v := <-applied:
				got, _ := v.Get("osd_max_backfills")
				if v.Int("osd_max_backfills") != backfills || got.Source != src || v.Int("osd_recovery_max_active") != 8 {
					t.Errorf("%s: applied %+v", when, v.All())
				}
			default:
				t.Errorf("%s: nothing applied", when)
			}
		}
		nothing := func(when string) {
			t.Helper()
			synctest.Wait()
			select {
			case v := <-applied:
				t.Errorf("%s: applied %+v", when, v.All())
			default:
			}
		}

		expect("first fetch", 2, SourceMon)
		time.Sleep(5 * time.Second)
		nothing("unchanged")
		set(map[string]string{"osd_max_backfills": "4", "osd_recovery_max_active": "1"}, nil)
		time.Sleep(5 * time.Second)
		expect("after a change", 4, SourceMon)
		set(nil, errors.New("no quorum"))
		time.Sleep(5 * time.Second)
		nothing("while the monitors fail")
		set(map[string]string{}, nil) // the value was removed
		time.Sleep(5 * time.Second)
		expect("after config rm", 1, SourceDefault)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

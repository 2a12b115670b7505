package rados_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/cuttlestore/cuttle/rados"
)

// An op that Config.OpTimeout ends on an inactive PG (its primary holds
// it without answering) says which PG it waited for, the PG's acting set
// and primary in the client's map, the state the monitors report, and
// what to run next; it is still ErrTimedOut and DeadlineExceeded.
func TestOpTimeoutNamesThePG(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		c.setScript(func(int32, *wire.OSDOp) action { return actIgnore })
		pg, primary := c.objectPG("obj")
		var sc osdmap.Scratch
		mp, err := c.newest().PGToUpActing(pg, &sc)
		if err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		c.pgStates = map[string]string{pg.String(): "undersized+degraded+peered"}
		c.mu.Unlock()
		cfg := c.config()
		cfg.OpTimeout = 3 * time.Second
		conn, err := rados.Connect(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io, err := conn.OpenIOContext(testPool)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = io.WriteFull(t.Context(), "obj", []byte("v"))
		if !errors.Is(err, rados.ErrTimedOut) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d < 3*time.Second || d > 5*time.Second {
			t.Errorf("ended after %v, want the 3s op timeout and at most the monitors' short answer", d)
		}
		want := fmt.Sprintf(`object "obj" waited for pg %s (acting %s, sent to primary osd.%d, in the client's map epoch %d), `+
			`which the monitors report undersized+degraded+peered: see cuttle health detail and cuttle pg query %s`,
			pg, osdmap.FormatOSDs(mp.Acting), primary, conn.Epoch(), pg)
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "no reply within the op timeout (3s)") {
			t.Errorf("error:\n%v\nwant it to hold\n%s", err, want)
		}

		// Without the monitors' word the error says what the client
		// knows.
		c.mu.Lock()
		c.pgStates = nil
		c.mu.Unlock()
		err = io.WriteFull(t.Context(), "obj", []byte("v"))
		if !errors.Is(err, rados.ErrTimedOut) || strings.Contains(err.Error(), "monitors report") ||
			!strings.Contains(err.Error(), "cuttle pg query "+pg.String()) {
			t.Errorf("without a state: %v", err)
		}
	})
}

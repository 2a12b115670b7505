package sim

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/cuttlestore/cuttle/rados"
)

// Admin commands reach an OSD through the client library: its PGs with
// their statistics, and the ops in flight while a replica holds a
// commit.
func TestOSDAdminCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "a", make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "b", make([]byte, 24)); err != nil {
			t.Fatal(err)
		}
		_, pgA, mp := place(t, c, "a")
		r, err := conn.OSDCommand(ctx, mp.ActingPrimary, "dump_pgs")
		if err != nil {
			t.Fatal(err)
		}
		var pgs []osd.PGStatus
		if err := json.Unmarshal(r.Data, &pgs); err != nil {
			t.Fatal(err)
		}
		var objects, bytes int64
		found := false
		for _, p := range pgs {
			if p.State != "active+clean" {
				t.Errorf("pg %s is %s", p.PG, p.State)
			}
			if p.PG == pgA.String() {
				found = true
			}
			if p.Role == "primary" || p.Role == "replica" {
				objects += p.Objects
				bytes += p.Bytes
			}
		}
		// Size 3 on three OSDs: every OSD holds every PG.
		if !found || objects != 2 || bytes != 1024 {
			t.Fatalf("dump_pgs: found %v, %d objects, %d bytes; want 2 and 1024", found, objects, bytes)
		}
		if !strings.Contains(r.Text, "active+clean") {
			t.Fatalf("text form: %q", r.Text)
		}

		c.OSDs[mp.Acting[1]].Gate.Hold()
		comp := io.WriteFullAsync(ctx, "a", []byte("held"))
		if err := comp.WaitApplied(ctx); err != nil {
			t.Fatal(err)
		}
		r, err = conn.OSDCommand(ctx, mp.ActingPrimary, "dump_ops_in_flight")
		if err != nil {
			t.Fatal(err)
		}
		var inflight struct {
			Num int              `json:"num_ops"`
			Ops []osd.OpInFlight `json:"ops"`
		}
		if err := json.Unmarshal(r.Data, &inflight); err != nil {
			t.Fatal(err)
		}
		if inflight.Num != 1 || inflight.Ops[0].Object != "a" || inflight.Ops[0].State != "waiting for replicas" {
			t.Fatalf("ops in flight: %+v", inflight)
		}
		c.OSDs[mp.Acting[1]].Gate.Open()
		if err := comp.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		var oe *rados.OpError
		// A memory store has no key-value database to report on.
		if _, err := conn.OSDCommand(ctx, mp.ActingPrimary, "dump_objectstore_kv_stats"); !errors.As(err, &oe) {
			t.Fatalf("kv stats of a memstore: %v", err)
		}
		if _, err := conn.OSDCommand(ctx, mp.ActingPrimary, "no_such_command"); !errors.As(err, &oe) {
			t.Fatalf("unknown command: %v", err)
		}
		// Issue 35: an OSD that does not exist is not reported as down.
		var ue *rados.OSDUnavailableError
		_, err = conn.OSDCommand(ctx, 9, "status")
		if !errors.As(err, &ue) || !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("status of osd.9: %v", err)
		}
		if want := "osd.9 does not exist (the map at epoch "; !strings.HasPrefix(ue.Reason(), want) ||
			!strings.HasSuffix(ue.Reason(), " has osd.0-osd.2)") {
			t.Fatalf("osd.9: %q", ue.Reason())
		}
	})
}

// A command sent to an OSD that has just died, while the map still shows
// it up, is answered once the OSD is back: the client sends it again
// when its session fails instead of waiting out the deadline.
func TestOSDCommandOutlivesARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		_, pg, mp := place(t, c, "a")
		c.KillOSD(mp.ActingPrimary)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := conn.PGCommand(ctx, pg.String(), "pg scrub")
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("answered by a dead OSD: %v", err)
		default:
		}
		c.StartOSD(mp.ActingPrimary)
		if err := <-done; err != nil {
			t.Fatalf("pg scrub after the primary restarted: %v", err)
		}
	})
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/launcher"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/rados"
)

// Self-healing across processes: an OSD killed with SIGKILL is reported
// by its peers and marked down, writes go on without it, and when `cluster
// up` restarts it, peering brings it every write it missed. The proof:
// the two OSDs that had the writes all along are killed too, and the
// returned OSD alone serves every acknowledged write and none removed.
func TestClusterRecoversReturningOSD(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	c := upLocalCluster(t)
	dir, conf, cli, waitFor := c.dir, c.conf, c.cli, c.waitFor
	upCount := func() int {
		var st osdmon.StatView
		if err := json.Unmarshal([]byte(cli("--format", "json", "osd", "stat")), &st); err != nil {
			t.Fatal(err)
		}
		return st.NumUp
	}
	kill := func(name string) {
		t.Helper()
		if err := syscall.Kill(localStatus(t, dir)[name].PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitFor(name+" to stop", func() bool { return localStatus(t, dir)[name].State == launcher.Stopped })
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := rados.ConnectConf(ctx, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io, err := conn.OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	content := func(i, round int) []byte { return fmt.Appendf(nil, "object %d, round %d", i, round) }
	for i := range 20 {
		if err := io.WriteFull(ctx, fmt.Sprint("obj-", i), content(i, 1)); err != nil {
			t.Fatal(err)
		}
	}

	// osd.2 dies; its peers report it (heartbeat grace 20 s) and the
	// monitors mark it down; writes go on with two copies.
	kill("osd.2")
	waitFor("osd.2 to be marked down", func() bool { return upCount() == 2 })
	for i := range 30 {
		if err := io.WriteFull(ctx, fmt.Sprint("obj-", i), content(i, 2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := io.Delete(ctx, "obj-0"); err != nil {
		t.Fatal(err)
	}

	// It comes back and catches up before its PGs serve again.
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--dir", dir); err != nil {
		t.Fatalf("second cluster up: %v\n%s%s", err, out, stderr)
	}
	waitFor("osd.2 to be up", func() bool { return upCount() == 3 })
	for _, osd := range []string{"osd.0", "osd.1", "osd.2"} {
		waitFor(osd+"'s PGs to peer", func() bool {
			out := cli("tell", osd, "status")
			return strings.Contains(out, "active") && !strings.Contains(out, "peering")
		})
	}
	// Its PGs' primaries push it what it missed, each first reserving
	// one of its recovery slots (osd_max_backfills, 1): it never received
	// two PGs' pushes at once, and took none without a reservation.
	waitFor("recovery to finish", func() bool {
		for _, osd := range []string{"osd.0", "osd.1", "osd.2"} {
			out := cli("tell", osd, "status")
			if strings.Contains(out, "recover") || strings.Contains(out, "backfill") || strings.Contains(out, "peering") {
				return false
			}
		}
		return true
	})
	var res struct {
		Remote struct {
			Limit   int `json:"max_allowed"`
			MaxHeld int `json:"max_held"`
		} `json:"remote_reservations"`
		Unreserved uint64 `json:"unreserved_pushes"`
	}
	if err := json.Unmarshal([]byte(cli("--format", "json", "tell", "osd.2", "dump_recovery_reservations")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Remote.Limit != 1 || res.Remote.MaxHeld != 1 || res.Unreserved != 0 {
		t.Errorf("osd.2's reservations during its recovery: %+v; want at most (and at least) 1 held of 1, no push without one", res)
	}

	// The others die; osd.2 alone has to serve everything.
	cli("osd", "pool", "set", "rbd", "min_size", "1", "--yes-i-really-mean-it")
	kill("osd.0")
	kill("osd.1")
	cli("osd", "down", "0", "1")
	for i := 1; i < 30; i++ {
		got, err := io.Read(ctx, fmt.Sprint("obj-", i), 0, 0)
		if err != nil || string(got) != string(content(i, 2)) {
			t.Fatalf("obj-%d from osd.2 alone: %q, %v; want %q", i, got, err, content(i, 2))
		}
	}
	if _, err := io.Read(ctx, "obj-0", 0, 0); !errors.Is(err, rados.ErrNotFound) {
		t.Fatalf("obj-0, removed while osd.2 was down: %v; want not found", err)
	}
}

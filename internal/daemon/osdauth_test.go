package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
)

func rotatingKeys(t *testing.T, period time.Duration, now time.Time) *auth.RotatingKeys {
	t.Helper()
	k, err := auth.NewRotatingKeys("osd", period)
	if err != nil {
		t.Fatal(err)
	}
	k.Rotate(now)
	return k
}

// The keys are good until the successor of the newest one starts
// sealing tickets, a period before the newest expires; they are fetched
// again at half the time left, at most a quarter period apart, never in
// a busy loop.
func TestRotatingKeysRefreshSchedule(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const period = time.Hour
	k := rotatingKeys(t, period, now)
	until, ok := keysGoodUntil(k)
	if !ok {
		t.Fatal("no keys")
	}
	var newest time.Time
	for _, key := range k.Keys() {
		if key.Expires.After(newest) {
			newest = key.Expires
		}
	}
	if !until.Equal(newest.Add(-period)) || !until.After(now.Add(period)) {
		t.Fatalf("good until %v; newest expires %v; now %v", until, newest, now)
	}
	if d := refreshAfter(k, now); d != period/4 {
		t.Errorf("refresh after %v of a fresh set, want a quarter period", d)
	}
	// Close to the end, half the time left; past it, the minimum.
	if d := refreshAfter(k, until.Add(-4*time.Minute)); d != 2*time.Minute {
		t.Errorf("4 min before the end: refresh after %v, want 2m", d)
	}
	if d := refreshAfter(k, until.Add(time.Hour)); d != minKeysRefresh {
		t.Errorf("past the end: refresh after %v, want %v", d, minKeysRefresh)
	}
	// A long period is refreshed at least every maxKeysRefresh.
	if d := refreshAfter(rotatingKeys(t, 24*time.Hour, now), now); d != maxKeysRefresh {
		t.Errorf("a day's period: refresh after %v", d)
	}
	empty, _ := auth.NewRotatingKeys("osd", period)
	if _, ok := keysGoodUntil(empty); ok || refreshAfter(empty, now) != minKeysRefresh {
		t.Error("an empty set counts as good")
	}
}

// The reply of auth get-rotating opens with the daemon's own secret only.
func TestOpenRotating(t *testing.T) {
	k := rotatingKeys(t, time.Hour, time.Now())
	secret := auth.NewSecret()
	data, _ := json.Marshal(map[string]any{"service": "osd", "sealed": k.Seal(secret[:])})
	got, err := openRotating(data, secret)
	if err != nil || len(got.Keys()) != len(k.Keys()) || got.Service() != "osd" {
		t.Fatalf("open: %v, %v", got, err)
	}
	if _, err := openRotating(data, auth.NewSecret()); err == nil {
		t.Error("keys opened with another secret")
	}
	mds, _ := auth.NewRotatingKeys("mds", time.Hour)
	mds.Rotate(time.Now())
	other, _ := json.Marshal(map[string]any{"sealed": mds.Seal(secret[:])})
	if _, err := openRotating(other, secret); err == nil || !strings.Contains(err.Error(), "mds") {
		t.Errorf("the mds keys: %v", err)
	}
	for _, bad := range []string{`nope`, `{}`, `{"sealed":"AAAA"}`} {
		if _, err := openRotating([]byte(bad), secret); err == nil {
			t.Errorf("openRotating(%s) succeeded", bad)
		}
	}
}

// The caps osd mkfs gives an OSD parse, and let it boot, fetch its
// rotating keys and read the maps, but not change the cluster.
func TestOSDCaps(t *testing.T) {
	name := auth.EntityName{Type: "osd", ID: "0"}
	cc, err := auth.NewCapChecker(name, auth.Caps{"mon": OSDMonCaps, "osd": OSDOSDCaps}, auth.Events{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		req  auth.Request
		want bool
	}{
		{auth.Request{Service: "mon", Access: auth.AccessRead, Command: "auth get-rotating"}, true},
		{auth.Request{Service: "mon", Access: auth.AccessWrite, Command: "osd boot"}, true},
		{auth.Request{Service: "mon", Access: auth.AccessRead, Command: "osd dump"}, true},
		{auth.Request{Service: "mon", Access: auth.AccessWrite, Command: "osd pool create"}, false},
		{auth.Request{Service: "osd", Access: auth.AccessRead | auth.AccessWrite | auth.AccessExec, Pool: "rbd"}, true},
	} {
		if got := cc.Allows(c.req); got != c.want {
			t.Errorf("%v: allowed %v, want %v", c.req, got, c.want)
		}
	}
}

func TestReadOSDDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadOSDDir(dir); err == nil || !strings.Contains(err.Error(), "osd mkfs") {
		t.Errorf("empty directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, osdWhoamiFile), []byte("7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOSDDir(dir); err == nil || !strings.Contains(err.Error(), "did not complete") {
		t.Errorf("without ready: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, osdReadyFile), []byte("ready\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, err := ReadOSDDir(dir); err != nil || id != 7 {
		t.Errorf("ReadOSDDir = %d, %v", id, err)
	}
	for _, bad := range []string{"", "-1", "x", "99999999999"} {
		if _, err := parseWhoami(bad); err == nil {
			t.Errorf("parseWhoami(%q) succeeded", bad)
		}
	}
	if err := CheckOSDDir(dir); err == nil || !strings.Contains(err.Error(), "already holds an OSD") {
		t.Errorf("CheckOSDDir of an OSD: %v", err)
	}
	empty := t.TempDir()
	if err := os.Mkdir(filepath.Join(empty, "lost+found"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := CheckOSDDir(empty); err != nil {
		t.Errorf("a fresh file system: %v", err)
	}
	if err := CheckOSDDir(filepath.Join(empty, "new")); err != nil {
		t.Errorf("a missing directory: %v", err)
	}
}

// failedHandshake fails at once, so a peer connection made before the
// OSD's first login fails instead of hanging.
func TestPeerHandshakeWithoutTicket(t *testing.T) {
	a := &osdAuth{self: auth.EntityName{Type: "osd", ID: "3"}, service: "osd"}
	if _, _, err := a.peerHandshake(auth.EntityName{Type: "osd", ID: "4"}).Step(nil); err == nil || !strings.Contains(err.Error(), "no osd service ticket") {
		t.Errorf("no ticket: %v", err)
	}
	a.tickets = []auth.ServiceTicket{{Service: "mds"}}
	if _, ok := a.serviceTicket(); ok {
		t.Error("an mds ticket taken for an osd one")
	}
}

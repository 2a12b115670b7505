package cli

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/daemon"
)

// The auth database on three monitor processes: an entity added with
// "auth add" authenticates with the key "auth get" prints and has the caps
// it was given; once removed, it is refused as unknown. The first leader
// seeds the database from the monitors' keyring.
func TestAuthCommandsOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process monitor test")
	}
	c := newProcCluster(t)
	// A command the client had to send again (its monitor session was
	// reset while the first try committed) is answered by the retry,
	// which finds the entity as asked: both answers are success.
	if out := c.must("auth", "add", "client.app", "mon=allow r"); !strings.Contains(out, "added key for client.app") &&
		!strings.Contains(out, "client.app exists with the same caps") {
		t.Fatalf("auth add: %q", out)
	}
	if _, err := c.cli("client.admin", "auth", "add", "client.app", "mon=allow rw"); err == nil || !strings.Contains(err.Error(), "(EEXIST)") {
		t.Errorf("auth add with other caps: %v", err)
	}
	if _, err := c.cli("client.admin", "auth", "caps", "client.app", "mon=allow sideways"); err == nil || !strings.Contains(err.Error(), "bad capabilities") {
		t.Errorf("auth caps with bad caps: %v", err)
	}

	keyring := filepath.Join(c.dir, "app.keyring")
	if err := os.WriteFile(keyring, []byte(c.must("auth", "get", "client.app")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := c.cli("client.app", "--keyring", keyring, "status"); err != nil || !strings.Contains(out, "HEALTH") {
		t.Fatalf("client.app status: %q, %v", out, err)
	}
	if _, err := c.cli("client.app", "--keyring", keyring, "config", "set", "osd", "osd_max_backfills", "2"); err == nil || !strings.Contains(err.Error(), "(EACCES)") {
		t.Errorf("client.app config set: %v", err)
	}
	// Reading keys needs x on the monitors, which "allow r" lacks.
	if _, err := c.cli("client.app", "--keyring", keyring, "auth", "get", "client.admin"); err == nil || !strings.Contains(err.Error(), "(EACCES)") {
		t.Errorf("client.app auth get: %v", err)
	}

	// The bootstrap import: the leader seeds the database from the
	// keyring the monitors were made with, within a few of its ticks.
	var dump struct {
		Entities []struct {
			Entity string            `json:"entity"`
			Key    string            `json:"key"`
			Caps   map[string]string `json:"caps"`
		} `json:"auth_dump"`
	}
	seed, err := auth.LoadKeyring(filepath.Join(c.dir, "admin.keyring"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := json.Unmarshal([]byte(c.must("--format", "json", "auth", "ls")), &dump); err != nil {
			t.Fatal(err)
		}
		if len(dump.Entities) > 1 || time.Now().After(deadline) {
			break
		}
	}
	got := map[string]string{}
	for _, e := range dump.Entities {
		got[e.Entity] = e.Key
		if n, _ := auth.ParseEntityName(e.Entity); n.Type == "client" && seed[n].Caps != nil && !maps.Equal(seed[n].Caps, e.Caps) {
			t.Errorf("%s: caps %v, keyring has %v", e.Entity, e.Caps, seed[n].Caps)
		}
	}
	for n, e := range seed {
		if got[n.String()] != e.Key.Base64() {
			t.Errorf("%s not seeded from the keyring: %v", n, got)
		}
	}
	if _, err := c.cli("client.admin", "auth", "rm", "mon.*"); err == nil || !strings.Contains(err.Error(), "(EPERM)") {
		t.Errorf("auth rm mon.*: %v", err)
	}
	// The way back in for an operator locked out: act as the monitors.
	if out, err := c.cli("mon.*", "--keyring", filepath.Join(c.dir, "a", daemon.KeyringFile), "auth", "get", "client.admin"); err != nil || !strings.Contains(out, "[client.admin]") {
		t.Errorf("auth get as mon.*: %q, %v", out, err)
	}

	c.must("auth", "rm", "client.app")
	if _, err := c.cli("client.app", "--keyring", keyring, "status"); err == nil || !strings.Contains(err.Error(), "unknown entity") {
		t.Errorf("client.app after auth rm: %v", err)
	}
	if _, err := c.cli("client.admin", "auth", "get", "client.app"); err == nil || !strings.Contains(err.Error(), "unknown entity") {
		t.Errorf("auth get after rm: %v", err)
	}
}

package mapcmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// "osdmap balance" balances a map file offline: the spread narrows to the
// deviation asked for, the written map holds the upmaps, and the upmap
// commands file lists them.
func TestOSDMapBalance(t *testing.T) {
	dir := t.TempDir()
	in, balanced, cmds := filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "cmds")
	if _, _, err := run(t, "osdmap", "create", "--num-osds", "24", "--hosts", "8", "--pg-num", "256", "-o", in,
		"--fsid", "c0ffee00-0000-4000-8000-000000000001"); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := run(t, "--format", "json", "osdmap", "balance", in, "--max-moves", "20", "-o", balanced, "--upmap-cmds", cmds)
	if err != nil {
		t.Fatal(err)
	}
	var res balanceResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	b, a := res.Before.Pools[0], res.After.Pools[0]
	if b.MaxDeviation <= 1 || a.MaxDeviation > 1 || a.Stddev >= b.Stddev || res.Rounds == 0 || res.Moves > 20*res.Rounds {
		t.Fatalf("before %+v after %+v rounds %d moves %d", b, a, res.Rounds, res.Moves)
	}
	m, err := loadOSDMap(balanced)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Spec().PGUpmapItems); n != res.Upmaps || n == 0 {
		t.Fatalf("written map has %d entries, result says %d", n, res.Upmaps)
	}
	data, err := os.ReadFile(cmds)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(data), "cuttle osd pg-upmap-items "); got != res.Upmaps {
		t.Fatalf("%d commands for %d entries:\n%s", got, res.Upmaps, data)
	}
	plain, _, err := run(t, "osdmap", "balance", balanced)
	if err != nil || !strings.Contains(plain, "after 0 rounds, 0 moves") {
		t.Fatalf("balanced map balanced again: %v\n%s", err, plain)
	}
	if _, _, err := run(t, "osdmap", "balance", in, "--pool", "nosuch"); err == nil || !strings.Contains(err.Error(), "ENOENT") {
		t.Fatalf("unknown pool: %v", err)
	}
}

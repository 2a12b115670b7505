package mapcmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/crushvectors"
	"github.com/cuttlestore/cuttle/osdmap"
)

// runOSDMapCLI runs the command tree with args and returns stdout and the
// error of Execute.
func runOSDMapCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	stdout, _, err := run(t, args...)
	return stdout, err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runOSDMapCLI(t, args...)
	if err != nil {
		t.Fatalf("cuttle %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func golden(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n--- got\n%s--- want\n%s", what, got, want)
	}
}

const goldenFSID = "00112233-4455-6677-8899-aabbccddeeff"

// createGoldenMap writes epoch 1 of a small map: 6 OSDs on 3 hosts, pool
// 1 'data' with 8 PGs.
func createGoldenMap(t *testing.T) (string, string) {
	path := filepath.Join(t.TempDir(), "om")
	out := mustRun(t, "osdmap", "create", "--num-osds", "6", "--hosts", "3", "--pg-num", "8", "--pool", "data",
		"-o", path, "--fsid", goldenFSID, "--now", "2025-01-02T03:04:05.123456Z")
	return path, strings.ReplaceAll(out, path, "FILE")
}

func TestOSDMapGolden(t *testing.T) {
	path, out := createGoldenMap(t)
	golden(t, "create", out, "wrote FILE: epoch 1, 6 osds (6 up, 6 in), 1 pools\n")

	golden(t, "print", mustRun(t, "osdmap", "print", path), `epoch 1
fsid 00112233-4455-6677-8899-aabbccddeeff
created 2025-01-02T03:04:05.123456+0000
modified 2025-01-02T03:04:05.123456+0000
flags 
crush 6 devices 4 buckets 2 rules tunables jewel

pool 1 'data' replicated size 3 min_size 2 crush_rule 0 object_hash rjenkins pg_num 8 pgp_num 8 last_change 0 flags hashpspool

max_osd 6
osd.0 up   in  weight 1 up_from 1 up_thru 0 down_at 0 - exists,up
osd.1 up   in  weight 1 up_from 1 up_thru 0 down_at 0 - exists,up
osd.2 up   in  weight 1 up_from 1 up_thru 0 down_at 0 - exists,up
osd.3 up   in  weight 1 up_from 1 up_thru 0 down_at 0 - exists,up
osd.4 up   in  weight 1 up_from 1 up_thru 0 down_at 0 - exists,up
osd.5 up   in  weight 1 up_from 1 up_thru 0 down_at 0 - exists,up

`)
	golden(t, "map-object", mustRun(t, "osdmap", "map-object", path, "data", "foo"),
		"osdmap e1 pool 'data' (1) object 'foo' -> pg 1.7fc1f406 (1.6) -> up ([4,3,1], p4) acting ([4,3,1], p4)\n")
	golden(t, "map-object with namespace and key", mustRun(t, "osdmap", "map-object", path, "1", "foo", "--namespace", "ns", "--key", "k"),
		"osdmap e1 pool 'data' (1) object 'ns/foo' -> pg 1.1a714fe5 (1.5) -> up ([2,4,0], p2) acting ([2,4,0], p2)\n")
	golden(t, "map-pg", mustRun(t, "osdmap", "map-pg", path, "1.3"),
		"osdmap e1 pg 1.3 (1.3) -> up ([3,5,0], p3) acting ([3,5,0], p3)\n")

	out = mustRun(t, "osdmap", "set", path, "--down-osd", "0", "--out-osd", "3", "--set-flag", "noout",
		"--now", "2025-01-02T04:00:00Z")
	golden(t, "set", strings.ReplaceAll(out, path, "FILE"), `set noout
marked osd.0 down
marked osd.3 out
wrote FILE: epoch 2, 6 osds (5 up, 5 in), 1 pools
`)
	golden(t, "print after set", mustRun(t, "osdmap", "print", path), `epoch 2
fsid 00112233-4455-6677-8899-aabbccddeeff
created 2025-01-02T03:04:05.123456+0000
modified 2025-01-02T04:00:00.000000+0000
flags noout
crush 6 devices 4 buckets 2 rules tunables jewel

pool 1 'data' replicated size 3 min_size 2 crush_rule 0 object_hash rjenkins pg_num 8 pgp_num 8 last_change 0 flags hashpspool

max_osd 6
osd.0 down in  weight 1 up_from 1 up_thru 0 down_at 2 - exists
osd.1 up   in  weight 1 up_from 1 up_thru 0 down_at 0 - exists,up
osd.2 up   in  weight 1 up_from 1 up_thru 0 down_at 0 - exists,up
osd.3 up   out weight 0 up_from 1 up_thru 0 down_at 0 - exists,up
osd.4 up   in  weight 1 up_from 1 up_thru 0 down_at 0 - exists,up
osd.5 up   in  weight 1 up_from 1 up_thru 0 down_at 0 - exists,up

`)
	golden(t, "map-pgs", mustRun(t, "osdmap", "map-pgs", path, "--pool", "data"), `pool 1 pg_num 8
1.0 raw ([0,5,2], p0) up ([5,2], p5) acting ([5,2], p5)
1.1 raw ([5,2,0], p5) up ([5,2], p5) acting ([5,2], p5)
1.2 raw ([2,4,0], p2) up ([2,4], p2) acting ([2,4], p2)
1.3 raw ([5,0,2], p5) up ([5,2], p5) acting ([5,2], p5)
1.4 raw ([1,4,2], p1) up ([1,4,2], p1) acting ([1,4,2], p1)
1.5 raw ([2,4,0], p2) up ([2,4], p2) acting ([2,4], p2)
1.6 raw ([4,2,1], p4) up ([4,2,1], p4) acting ([4,2,1], p4)
1.7 raw ([1,4,2], p1) up ([1,4,2], p1) acting ([1,4,2], p1)
#osd	count	first	primary	c wt	wt
osd.0	0	0	0	1	1
osd.1	3	2	2	1	1
osd.2	8	2	2	1	1
osd.4	5	1	1	1	1
osd.5	3	3	3	1	1
 in 5
 avg 3 stddev 2.75681 (0.918937x) (expected 1.74356 0.581187x))
 min osd.1 3
 max osd.2 8
size 2	5
size 3	3
`)
}

func TestOSDMapSetReweightAndAffinity(t *testing.T) {
	path, _ := createGoldenMap(t)
	next := filepath.Join(filepath.Dir(path), "om2")
	incPath := filepath.Join(filepath.Dir(path), "inc")
	out := mustRun(t, "osdmap", "set", path, "--reweight", "osd.2=0.5", "--primary-affinity", "4=0",
		"--up-osd", "7", "-o", next, "--incremental-out", incPath, "--now", "2025-01-02T04:00:00Z")
	golden(t, "set", strings.ReplaceAll(out, next, "FILE"), `marked osd.7 up
reweighted osd.2 to 0.5
set osd.4 primary affinity to 0
wrote FILE: epoch 2, 7 osds (7 up, 6 in), 1 pools
`)
	m1, err := loadOSDMap(path)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := loadOSDMap(next)
	if err != nil {
		t.Fatal(err)
	}
	if m1.Epoch() != 1 || m2.Epoch() != 2 || m2.OSD(2).Weight != 0x8000 || m2.OSD(4).PrimaryAffinity != 0 || m2.MaxOSD() != 8 {
		t.Fatalf("e%d -> e%d: osd.2 %+v osd.4 %+v", m1.Epoch(), m2.Epoch(), m2.OSD(2), m2.OSD(4))
	}
	data, err := os.ReadFile(incPath)
	if err != nil {
		t.Fatal(err)
	}
	inc, err := osdmap.UnmarshalIncremental(data)
	if err != nil {
		t.Fatal(err)
	}
	m3, err := m1.Apply(inc)
	if err != nil || !m3.Equal(m2) {
		t.Fatalf("the written incremental does not make the written map: %v", err)
	}
}

func TestOSDMapJSON(t *testing.T) {
	path, _ := createGoldenMap(t)
	golden(t, "map-object json", mustRun(t, "--format", "json", "osdmap", "map-object", path, "data", "foo"), `{
  "epoch": 1,
  "pool": "data",
  "pool_id": 1,
  "objname": "foo",
  "raw_pgid": "1.7fc1f406",
  "pgid": "1.6",
  "up": [
    4,
    3,
    1
  ],
  "up_primary": 4,
  "acting": [
    4,
    3,
    1
  ],
  "acting_primary": 4
}
`)
	var dump osdmap.PGDump
	if err := json.Unmarshal([]byte(mustRun(t, "--format", "json", "osdmap", "map-pgs", path)), &dump); err != nil {
		t.Fatal(err)
	}
	if len(dump.Pools) != 1 || len(dump.Pools[0].PGs) != 8 || dump.Pools[0].PGs[3].PG.String() != "1.3" || len(dump.OSDs) != 6 {
		t.Fatalf("map-pgs json: %+v", dump)
	}
	var view struct {
		Epoch uint32 `json:"epoch"`
		FSID  string `json:"fsid"`
		OSDs  []struct {
			OSD int32 `json:"osd"`
			Up  bool  `json:"up"`
		} `json:"osds"`
		Pools []struct {
			Name  string `json:"pool_name"`
			PGNum uint32 `json:"pg_num"`
		} `json:"pools"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "--format", "json", "osdmap", "print", path)), &view); err != nil {
		t.Fatal(err)
	}
	if view.Epoch != 1 || view.FSID != goldenFSID || len(view.OSDs) != 6 || !view.OSDs[5].Up || view.Pools[0].Name != "data" {
		t.Fatalf("print json: %+v", view)
	}
	var sum osdmapSummary
	if err := json.Unmarshal([]byte(mustRun(t, "--format", "json", "osdmap", "set", path, "--in-osd", "1")), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Epoch != 2 || len(sum.Changes) != 1 {
		t.Fatalf("set json: %+v", sum)
	}
}

// TestOSDMapMatchesOsdmaptool builds the map of the osdmaptool vectors from
// the racks CRUSH map and checks map-pgs against osdmaptool's output.
func TestOSDMapMatchesOsdmaptool(t *testing.T) {
	want := crushvectors.ReadFile(t, "osdmap/om_racks.pool1.test-map-pgs-dump-all.txt")
	path := filepath.Join(t.TempDir(), "om")
	mustRun(t, "osdmap", "create", "--num-osds", "36", "--crush", crushvectors.Path(t, "maps/racks.txt"),
		"--pg-num", "2304", "-o", path)
	got := "marking all OSDs up and in\n" + mustRun(t, "osdmap", "map-pgs", path)
	if got != string(want) {
		t.Fatal("map-pgs differs from osdmaptool --test-map-pgs-dump-all")
	}
}

func TestOSDMapErrors(t *testing.T) {
	path, _ := createGoldenMap(t)
	dir := filepath.Dir(path)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"osdmap", "create", "--num-osds", "6"}, "-o FILE"},
		{[]string{"osdmap", "create", "--num-osds", "7", "--hosts", "3", "-o", filepath.Join(dir, "x")}, "evenly"},
		{[]string{"osdmap", "create", "--num-osds", "0", "-o", filepath.Join(dir, "x")}, "--num-osds"},
		{[]string{"osdmap", "create", "--num-osds", "6", "--racks", "2", "-o", filepath.Join(dir, "x")}, "--hosts-per-rack"},
		{[]string{"osdmap", "create", "--num-osds", "6", "--fsid", "nope", "-o", filepath.Join(dir, "x")}, "UUID"},
		{[]string{"osdmap", "create", "--num-osds", "6", "--pg-num", "0", "-o", filepath.Join(dir, "x")}, "pg_num"},
		{[]string{"osdmap", "print", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"osdmap", "map-pg", path, "1.x"}, "bad seed"},
		{[]string{"osdmap", "map-pg", path, "9.0"}, "no such pool"},
		{[]string{"osdmap", "map-object", path, "nopool", "foo"}, "no such pool"},
		{[]string{"osdmap", "map-pgs", path, "--pool", "9"}, "no such pool"},
		{[]string{"osdmap", "set", path}, "nothing to change"},
		{[]string{"osdmap", "set", path, "--down-osd", "9"}, "no such osd"},
		{[]string{"osdmap", "set", path, "--reweight", "1=2"}, "between 0 and 1"},
		{[]string{"osdmap", "set", path, "--reweight", "1"}, "OSD=VALUE"},
		{[]string{"osdmap", "set", path, "--set-flag", "nosuch"}, "unknown flag"},
	} {
		_, err := runOSDMapCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("cuttle %s: error %v, want one mentioning %q", strings.Join(c.args, " "), err, c.want)
		}
	}
	// A file that is not a map is rejected with a decoding error.
	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte("OSDM\x01\x01\xff\xff\xff\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runOSDMapCLI(t, "osdmap", "print", junk); err == nil || !strings.Contains(err.Error(), "decode") {
		t.Errorf("junk map: %v", err)
	}
}

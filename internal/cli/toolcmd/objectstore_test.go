package toolcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
	"github.com/cuttlestore/cuttle/objid"
)

var (
	osPG    = objectstore.PGCollection(1, 0x1f)
	osAlpha = objid.Object(1, "", "alpha")
	osBeta  = objid.New(1, "ns", "", "beta", objid.NoSnap)
	osSnap  = objid.New(1, "ns", "", "beta", 0x12)
	osMeta  = objid.Object(-1, "", "osdmap.1")
)

// osStore makes a store with "cuttle objectstore mkfs" and fills it
// through the blockstore API; it returns the path and alpha's data.
func osStore(t *testing.T) (string, []byte) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	stdout, _, err := run(t, "objectstore", "mkfs", "--path", dir, "--size", "16M", "--alloc-unit", "16K")
	if err != nil {
		t.Fatal(err)
	}
	want := "created store " + dir + ": 16 MiB (16777216 bytes), 1024 allocation units of 16 KiB, checksum block 4 KiB\n"
	if stdout != want {
		t.Fatalf("mkfs printed %q, want %q", stdout, want)
	}
	s, err := blockstore.Open(blockstore.Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	alpha := bytes.Repeat([]byte("0123456789abcdef"), 2500) // 40000 bytes
	tx := new(objectstore.Transaction).
		CreateCollection(osPG).CreateCollection(objectstore.MetaCollection).
		Write(osPG, osAlpha, 0, alpha).
		SetAttrs(osPG, osAlpha, map[string][]byte{"_": []byte("oi"), "snapset": {0, 1, 2}}).
		OmapSetHeader(osPG, osAlpha, []byte("hdr")).
		OmapSetKeys(osPG, osAlpha, map[string][]byte{"k1": []byte("v1"), "k2": []byte("v2")}).
		Write(osPG, osBeta, 100, []byte("b")).
		Write(osPG, osSnap, 0, []byte("old")).
		Touch(objectstore.MetaCollection, osMeta)
	if err := objectstore.Apply(context.Background(), s, tx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, alpha
}

func TestObjectStoreList(t *testing.T) {
	dir, _ := osStore(t)
	stdout, _, err := run(t, "objectstore", "list", "--path", dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "meta\t1 objects\n1.1f_head\t3 objects\n"; stdout != want {
		t.Errorf("list printed %q, want %q", stdout, want)
	}
	stdout, _, err = run(t, "objectstore", "list", "--path", dir, "--collection", "1.1f_head")
	if err != nil {
		t.Fatal(err)
	}
	// Hash order, as ListObjects returns it.
	ids := []objid.ID{osAlpha, osBeta, osSnap}
	slicesSortIDs(ids)
	var want strings.Builder
	for _, o := range ids {
		want.WriteString(o.String() + "\n")
	}
	if stdout != want.String() {
		t.Errorf("list --collection printed %q, want %q", stdout, want.String())
	}
	stdout, _, err = run(t, "--format", "json", "objectstore", "list", "--path", dir, "--collection", "1.1f_head")
	if err != nil {
		t.Fatal(err)
	}
	var objs []objectInfo
	if err := json.Unmarshal([]byte(stdout), &objs); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if len(objs) != 3 || objs[0].ID != ids[0].String() {
		t.Errorf("json list %+v", objs)
	}
	stdout, _, err = run(t, "--format", "json", "objectstore", "list", "--path", dir)
	var colls []collectionInfo
	if err != nil || json.Unmarshal([]byte(stdout), &colls) != nil || len(colls) != 2 || colls[1] != (collectionInfo{"1.1f_head", 3}) {
		t.Errorf("json collections %q, %v", stdout, err)
	}
}

func slicesSortIDs(ids []objid.ID) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && objid.Less(ids[j], ids[j-1]); j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}

func TestObjectStoreDump(t *testing.T) {
	dir, _ := osStore(t)
	stdout, _, err := run(t, "objectstore", "dump", "--path", dir, "--collection", "1.1f_head", "--object", "alpha")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"collection: 1.1f_head\n",
		"object: " + osAlpha.String() + "\n",
		`  pool 1, namespace "", key "", name "alpha", snap head, hash`,
		"size: 40000\n",
		"allocated: 40000\n",
		"attrs: 2\n",
		`  "_" (2 bytes) "oi"` + "\n",
		`  "snapset" (3 bytes) 000102` + "\n",
		`omap header: (3 bytes) "hdr"` + "\n",
		"omap: 2\n",
		`  "k1" (2 bytes) "v1"` + "\n",
		"extents: 1 (checksum block 4096)\n",
		"  0x0~0xc000 at device 0x0\n    0x0 crc32c ",
		"\n    0x8000 crc32c ",
		"pages: 1\n  0x0~0xa000\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dump lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, err = run(t, "--format", "json", "objectstore", "dump", "--path", dir, "--collection", "1.1f_head", "--object", "alpha")
	if err != nil {
		t.Fatal(err)
	}
	var d dumpInfo
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if d.Size != 40000 || len(d.Layout.Extents) != 1 || len(d.Layout.Extents[0].Checksums) != 12 || string(d.Omap[1].Value) != "v2" || string(d.OmapHeader) != "hdr" {
		t.Errorf("json dump %+v", d)
	}
	// beta has a head and a snap: the head is chosen unless --snap says.
	stdout, _, err = run(t, "objectstore", "dump", "--path", dir, "--collection", "1.1f_head", "--object", "beta")
	if err != nil || !strings.Contains(stdout, "object: "+osBeta.String()+"\n") || !strings.Contains(stdout, "size: 101\n") {
		t.Errorf("dump beta: %v\n%s", err, stdout)
	}
	stdout, _, err = run(t, "objectstore", "dump", "--path", dir, "--collection", "1.1f_head", "--object", "beta", "--snap", "12")
	if err != nil || !strings.Contains(stdout, "object: "+osSnap.String()+"\n") || !strings.Contains(stdout, "size: 3\n") {
		t.Errorf("dump beta --snap 12: %v\n%s", err, stdout)
	}
	// The meta collection's objects are in pool -1.
	stdout, _, err = run(t, "objectstore", "dump", "--path", dir, "--collection", "meta", "--object", "osdmap.1")
	if err != nil || !strings.Contains(stdout, "size: 0\n") || !strings.Contains(stdout, "extents: 0") {
		t.Errorf("dump meta: %v\n%s", err, stdout)
	}
}

func TestObjectStoreGet(t *testing.T) {
	dir, alpha := osStore(t)
	stdout, _, err := run(t, "objectstore", "get", "--path", dir, "--collection", "1.1f_head", "--object", "alpha")
	if err != nil || stdout != string(alpha) {
		t.Fatalf("get to stdout: %d bytes, %v", len(stdout), err)
	}
	file := filepath.Join(t.TempDir(), "beta")
	stdout, _, err = run(t, "objectstore", "get", "--path", dir, "--collection", "1.1f_head", "--object", "beta", "--namespace", "ns", "-o", file)
	if err != nil {
		t.Fatal(err)
	}
	if want := "wrote 101 bytes of 1.1f_head " + osBeta.String() + " to " + file + "\n"; stdout != want {
		t.Errorf("get -o printed %q, want %q", stdout, want)
	}
	got, _ := os.ReadFile(file)
	if len(got) != 101 || got[100] != 'b' || got[0] != 0 {
		t.Errorf("file holds %q", got)
	}
	stdout, _, err = run(t, "--format", "json", "objectstore", "get", "--path", dir, "--collection", "1.1f_head", "--object", "beta", "-o", file)
	var gi getInfo
	if err != nil || json.Unmarshal([]byte(stdout), &gi) != nil || gi.Bytes != 101 || gi.Output != file {
		t.Errorf("json get: %q, %v", stdout, err)
	}
}

func TestObjectStoreFsck(t *testing.T) {
	dir, _ := osStore(t)
	stdout, _, err := run(t, "objectstore", "fsck", "--path", dir, "--deep")
	if err != nil {
		t.Fatal(err)
	}
	// The blocks that hold data: alpha's 40,000 bytes fill 10, beta's
	// byte and snap's three one each; the other blocks of their units
	// were never written and read as zeros.
	want := "deep fsck of " + dir + `
device: 16 MiB, allocation unit 16 KiB, checksum block 4 KiB
collections: 2, objects: 4, extents: 3, omap entries: 2
space: 81920 bytes used, 16695296 free, 81920 owned by objects, 40104 stored
checksum blocks verified: 12
no problems found
`
	if stdout != want {
		t.Errorf("fsck printed\n%s\nwant\n%s", stdout, want)
	}
	stdout, _, err = run(t, "--format", "json", "objectstore", "fsck", "--path", dir, "--repair")
	var rep blockstore.FsckReport
	if err != nil || json.Unmarshal([]byte(stdout), &rep) != nil || rep.Objects != 4 || rep.Found != 0 || !rep.Repair {
		t.Errorf("json fsck: %q, %v", stdout, err)
	}
	// Corrupt alpha's data: fsck --deep fails and names the block.
	f, err := os.OpenFile(filepath.Join(dir, "block"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("X"), 4096+5); err != nil {
		t.Fatal(err)
	}
	f.Close()
	stdout, _, err = run(t, "objectstore", "fsck", "--path", dir, "--deep")
	if err == nil || !strings.Contains(err.Error(), "1 problems found, 0 repaired") {
		t.Fatalf("fsck of a corrupt store: %v", err)
	}
	if want := "  checksum 1.1f_head " + osAlpha.String() + " offset 4096 device 4096+4096: crc32c"; !strings.Contains(stdout, want) {
		t.Errorf("fsck output lacks %q:\n%s", want, stdout)
	}
	if _, _, err := run(t, "objectstore", "get", "--path", dir, "--collection", "1.1f_head", "--object", "alpha"); err == nil ||
		!strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("get of a corrupt object: %v", err)
	}
}

func TestObjectStoreErrors(t *testing.T) {
	dir, _ := osStore(t)
	missing := filepath.Join(t.TempDir(), "none")
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"objectstore", "list"}, "no store given (--path DIR)"},
		{[]string{"objectstore", "list", "--path", missing}, "no store at " + missing + ": the directory does not exist"},
		{[]string{"objectstore", "fsck", "--path", empty}, "no store at " + empty + " (create one with"},
		{[]string{"objectstore", "mkfs", "--path", missing}, "no size given"},
		{[]string{"objectstore", "mkfs", "--path", missing, "--size", "10Q"}, `--size: bad size "10Q": unknown unit "Q"`},
		{[]string{"objectstore", "mkfs", "--path", missing, "--size", "1k"}, "--size 1k is smaller than the allocation unit 64 KiB"},
		{[]string{"objectstore", "mkfs", "--path", missing, "--size", "1G", "--alloc-unit", "3K"}, "allocation unit 3072 is not a power of two"},
		{[]string{"objectstore", "mkfs", "--path", dir, "--size", "1M"}, "holds a store"},
		{[]string{"objectstore", "list", "--path", dir, "--collection", "2.0_head"}, "no collection 2.0_head in the store"},
		{[]string{"objectstore", "list", "--path", dir, "--collection", "pg1"}, `collection "pg1": want meta`},
		{[]string{"objectstore", "dump", "--path", dir, "--collection", "1.1f_head"}, "no object given (--object NAME)"},
		{[]string{"objectstore", "dump", "--path", dir, "--collection", "1.1f_head", "--object", "nope"}, `no object "nope" in 1.1f_head`},
		{[]string{"objectstore", "dump", "--path", dir, "--collection", "1.1f_head", "--object", "beta", "--snap", "head", "--namespace", "x"}, `no object "beta"`},
		{[]string{"objectstore", "dump", "--path", dir, "--collection", "1.1f_head", "--object", "beta", "--snap", "zz"}, `bad --snap "zz"`},
		{[]string{"objectstore", "get", "--path", dir, "--object", "alpha"}, "no collection given"},
		{[]string{"objectstore", "bench", "--path", dir, "--workload", "nope"}, `unknown workload "nope"`},
	} {
		_, _, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	// The snap filter: without a head, two snaps of one name are ambiguous.
	s, err := blockstore.Open(blockstore.Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	tx := new(objectstore.Transaction).Remove(osPG, osBeta).Touch(osPG, osBeta.WithSnap(0x13))
	if err := objectstore.Apply(context.Background(), s, tx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, _, err = run(t, "objectstore", "dump", "--path", dir, "--collection", "1.1f_head", "--object", "beta")
	if err == nil || !strings.Contains(err.Error(), `2 objects named "beta" in 1.1f_head`) {
		t.Errorf("ambiguous name: %v", err)
	}
}

func TestObjectStoreBench(t *testing.T) {
	dir, _ := osStore(t)
	stdout, _, err := run(t, "objectstore", "bench", "--path", dir, "--workload", "seq-write,rand-read",
		"--object-size", "64K", "--objects", "4", "--total", "256K", "--duration", "5s")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "seq-write ") || !strings.HasPrefix(lines[1], "rand-read ") {
		t.Fatalf("bench printed %q", stdout)
	}
	stdout, _, err = run(t, "--format", "json", "objectstore", "bench", "--path", dir, "--workload", "rand-write",
		"--object-size", "64K", "--objects", "4", "--total", "64K", "--jobs", "2")
	var res []benchResult
	if err != nil || json.Unmarshal([]byte(stdout), &res) != nil || len(res) != 1 || res[0].Workload != "rand-write" || res[0].Ops == 0 || res[0].Concurrency != 2 {
		t.Fatalf("json bench: %q, %v", stdout, err)
	}
	// The store is still consistent afterwards.
	if _, _, err := run(t, "objectstore", "fsck", "--path", dir, "--deep"); err != nil {
		t.Fatal(err)
	}
}

package fsx

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Flags to run the tester by hand on any file system, e.g. a mount:
//
//	go test ./internal/fsx -run TestFlags -fsx.dir /mnt/cuttle -fsx.ops 50000 -fsx.size 10000000
//
// and on one file through two mounts of one file system, adding
// -fsx.dir2 /mnt/cuttle2 (each operation goes through one of the two,
// picked at random).
var (
	flagDir  = flag.String("fsx.dir", "", "directory to run TestFlags in (default: a temporary one)")
	flagDir2 = flag.String("fsx.dir2", "", "TestFlags: a second directory reaching the same file as -fsx.dir (another mount of it)")
	flagSeed = flag.Uint64("fsx.seed", 1, "TestFlags: seed")
	flagOps  = flag.Int("fsx.ops", 2000, "TestFlags: operations")
	flagSize = flag.Int64("fsx.size", 1<<20, "TestFlags: largest file size")
	flagOff  = flag.String("fsx.disable", "", "TestFlags: operations to turn off, comma-separated (read, write, mapread, ...)")
)

func TestFlags(t *testing.T) {
	dir := *flagDir
	if dir == "" {
		dir = t.TempDir()
	}
	p := filepath.Join(dir, "fsx.file")
	var off []Op
	for _, name := range strings.Split(*flagOff, ",") {
		for op := range numOps {
			if op.String() == name {
				off = append(off, op)
			}
		}
	}
	paths := []string{p}
	if *flagDir2 != "" {
		paths = append(paths, filepath.Join(*flagDir2, "fsx.file"))
	}
	res, err := Run(context.Background(), Config{Paths: paths, Seed: *flagSeed, Ops: *flagOps, MaxSize: *flagSize, Disable: off})
	var mm *MismatchError
	if errors.As(err, &mm) {
		t.Fatalf("%v\nlast operations:\n%s", err, strings.Join(mm.History, "\n"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ops, final size %d, counts %v, unsupported %v", res.Ops, res.FinalSize, res.Counts, res.Unsupported)
}

// The host's file system agrees with the model: the model is right.
func TestSeedsOnHostFileSystem(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		p := filepath.Join(t.TempDir(), "f")
		paths := []string{p}
		if *flagDir2 != "" {
			paths = append(paths, filepath.Join(*flagDir2, "fsx.file"))
		}
		res, err := Run(context.Background(), Config{Paths: paths, Seed: seed, Ops: 1500, MaxSize: 256 << 10, MaxIO: 32 << 10})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if res.Ops != 1500 {
			t.Fatalf("seed %d: %d ops", seed, res.Ops)
		}
		for _, op := range []Op{OpRead, OpWrite, OpTruncate} {
			if res.Counts[op] == 0 {
				t.Fatalf("seed %d: no %s in %v", seed, op, res.Counts)
			}
		}
	}
}

// Two descriptors through two names of one file (a hard link) stay
// coherent with each other and with the model.
func TestTwoPaths(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Config{Paths: []string{a, b}, Seed: 7, Ops: 1500, MaxSize: 128 << 10}); err != nil {
		t.Fatal(err)
	}
}

// A byte changed behind the tester's back is found, and reported with
// the seed and the operations before it.
func TestFindsCorruption(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	corrupt := func(i int) {
		if i != 300 {
			return
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, _ := f.Stat()
		if st.Size() == 0 {
			t.Fatal("seed gives an empty file at op 300; pick another")
		}
		b := make([]byte, st.Size())
		if _, err := f.ReadAt(b, 0); err != nil {
			t.Fatal(err)
		}
		for i := range b {
			b[i] ^= 0xff
		}
		if _, err := f.WriteAt(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Run(context.Background(), Config{Paths: []string{p}, Seed: 3, Ops: 2000, MaxSize: 64 << 10,
		Disable: []Op{OpTruncate, OpPunchHole, OpZeroRange}, AfterOp: corrupt})
	var mm *MismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("want a mismatch, got %v", err)
	}
	if mm.Seed != 3 || mm.Index <= 300 || len(mm.History) == 0 {
		t.Fatalf("mismatch report %+v", mm)
	}
	t.Log(mm)
}

// The same seed gives the same operations.
func TestReproducible(t *testing.T) {
	counts := func() map[Op]int {
		res, err := Run(context.Background(), Config{Paths: []string{filepath.Join(t.TempDir(), "f")}, Seed: 11, Ops: 500, MaxSize: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		return res.Counts
	}
	a, b := counts(), counts()
	for op := range numOps {
		if a[op] != b[op] {
			t.Fatalf("seed 11 ran %v then %v", a, b)
		}
	}
}

// Package fsx is a random-operation file tester in the spirit of fsx (the
// File System eXerciser Ceph runs on its mounts): it applies a seeded
// sequence of reads, writes, truncates, mapped reads and writes,
// fallocates, hole punches and zeroed ranges to one file, through one or
// several paths (two mounts of one file system), and checks every byte it
// reads against an in-memory model of the file.
//
// It works on any POSIX file system; Cuttle's tests run it on the FUSE
// mount, and its own tests on the host's temporary directory, which shows
// the model is right. A run is reproducible from its seed: the same Config
// gives the same operations.
package fsx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"

	"golang.org/x/sys/unix"
)

// Op names an operation kind.
type Op int

// The operations, in the order Config.Disable indexes them.
const (
	OpRead Op = iota
	OpWrite
	OpMapRead
	OpMapWrite
	OpTruncate
	OpFallocate
	OpPunchHole
	OpZeroRange
	OpFsync
	OpReopen
	numOps
)

var opNames = [numOps]string{"read", "write", "mapread", "mapwrite", "truncate", "fallocate",
	"punch_hole", "zero_range", "fsync", "reopen"}

func (o Op) String() string {
	if o >= 0 && o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// weights: how often each kind is picked, out of their sum. Reads and
// writes dominate, as in fsx; the rest keep the file's shape changing.
var weights = [numOps]int{OpRead: 20, OpWrite: 20, OpMapRead: 8, OpMapWrite: 8, OpTruncate: 6,
	OpFallocate: 4, OpPunchHole: 4, OpZeroRange: 4, OpFsync: 2, OpReopen: 2}

// Config is one run.
type Config struct {
	// Paths name the file under test; every path must reach the same
	// file (the same path twice, a hard link, or the file through two
	// mounts). The file is created, or truncated to zero, at the start.
	Paths []string
	Seed  uint64
	Ops   int
	// MaxSize bounds the file's length (Ceph's passes: 1 MB, 10 MB and
	// 100 MB); MaxIO one read's or write's length (default 64 KiB, or
	// MaxSize if smaller).
	MaxSize int64
	MaxIO   int64
	// Disable turns operations off (fsx's -R, -W, -F, -H ...): a file
	// system that refuses one with EOPNOTSUPP has it turned off for the
	// rest of the run anyway, and the Result says so.
	Disable []Op
	// AfterOp, if set, is called after each operation with its index;
	// tests use it to interfere with the file.
	AfterOp func(i int)
}

// Result says what a run did.
type Result struct {
	Ops    int
	Counts map[Op]int
	// Unsupported lists the operations the file system refused with
	// EOPNOTSUPP (or ENODEV for mmap), turned off for the rest of the run.
	Unsupported []Op
	FinalSize   int64
}

// MismatchError reports a read that disagreed with the model, or a size
// that did: the failing operation, where, and the operations before it.
type MismatchError struct {
	Seed    uint64
	Index   int // the failing operation's number, from 0
	Op      string
	Offset  int64 // the first byte that differs (or -1 for a size mismatch)
	Want    []byte
	Got     []byte
	History []string // the last operations, oldest first
}

func (e *MismatchError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("fsx seed %d: op %d (%s): %s", e.Seed, e.Index, e.Op, e.History[len(e.History)-1])
	}
	return fmt.Sprintf("fsx seed %d: op %d (%s): byte %d is %#02x, the model says %#02x",
		e.Seed, e.Index, e.Op, e.Offset, e.Got[0], e.Want[0])
}

const historyLen = 32

type run struct {
	cfg      Config
	rng      *rand.Rand
	files    []*os.File
	current  int // the index in files (and Paths) of the operation's file
	model    []byte
	disabled [numOps]bool
	res      Result
	history  []string
	index    int
	pageSize int64
}

// Run runs cfg. It returns a *MismatchError when the file disagrees with
// the model, and other errors when an operation fails outright.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if len(cfg.Paths) == 0 || cfg.Ops < 0 || cfg.MaxSize <= 0 {
		return Result{}, errors.New("fsx: need a path, a positive MaxSize and Ops >= 0")
	}
	if cfg.MaxIO <= 0 {
		cfg.MaxIO = 64 << 10
	}
	cfg.MaxIO = min(cfg.MaxIO, cfg.MaxSize)
	r := &run{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		res: Result{Counts: map[Op]int{}}, pageSize: int64(os.Getpagesize())}
	for _, op := range cfg.Disable {
		if op >= 0 && op < numOps {
			r.disabled[op] = true
		}
	}
	if err := r.open(true); err != nil {
		return r.res, err
	}
	defer r.closeAll()
	for r.index = 0; r.index < cfg.Ops; r.index++ {
		if err := ctx.Err(); err != nil {
			return r.res, err
		}
		if err := r.step(); err != nil {
			return r.res, err
		}
		r.res.Ops++
		if cfg.AfterOp != nil {
			cfg.AfterOp(r.index)
		}
	}
	if err := r.verifyAll(); err != nil {
		return r.res, err
	}
	r.res.FinalSize = int64(len(r.model))
	return r.res, nil
}

func (r *run) open(create bool) error {
	for i, p := range r.cfg.Paths {
		flags := os.O_RDWR
		if create && i == 0 {
			flags |= os.O_CREATE | os.O_TRUNC
		}
		f, err := os.OpenFile(p, flags, 0o644)
		if err != nil {
			return fmt.Errorf("fsx: open %s: %w", p, err)
		}
		r.files = append(r.files, f)
	}
	return nil
}

func (r *run) closeAll() error {
	var first error
	for _, f := range r.files {
		if err := f.Close(); err != nil && first == nil {
			first = fmt.Errorf("fsx: close %s: %w", f.Name(), err)
		}
	}
	r.files = r.files[:0]
	return first
}

func (r *run) pick() Op {
	total := 0
	for op, w := range weights {
		if !r.disabled[op] {
			total += w
		}
	}
	n := r.rng.IntN(total)
	for op, w := range weights {
		if r.disabled[op] {
			continue
		}
		if n < w {
			return Op(op)
		}
		n -= w
	}
	return OpRead
}

// span picks an offset and length: offsets anywhere below bound, lengths
// up to MaxIO, clipped to bound.
func (r *run) span(bound int64) (off, n int64) {
	if bound <= 0 {
		return 0, 0
	}
	off = r.rng.Int64N(bound)
	n = 1 + r.rng.Int64N(r.cfg.MaxIO)
	return off, min(n, bound-off)
}

func (r *run) note(format string, args ...any) {
	if len(r.history) == historyLen {
		r.history = r.history[1:]
	}
	prefix := fmt.Sprintf("%d ", r.index)
	if len(r.files) > 1 {
		prefix += fmt.Sprintf("[path %d] ", r.current)
	}
	r.history = append(r.history, prefix+fmt.Sprintf(format, args...))
}

func (r *run) step() error {
	op := r.pick()
	r.current = r.rng.IntN(len(r.files))
	err := r.do(op, r.files[r.current])
	if isUnsupported(op, err) {
		r.disabled[op] = true
		r.res.Unsupported = append(r.res.Unsupported, op)
		r.note("%s unsupported (%v): turned off", op, err)
		return nil
	}
	if err != nil {
		var mm *MismatchError
		if errors.As(err, &mm) {
			return err
		}
		return fmt.Errorf("fsx seed %d: op %d (%s): %w\nlast operations:\n%s", r.cfg.Seed, r.index, op, err, r.historyText())
	}
	r.res.Counts[op]++
	return nil
}

func isUnsupported(op Op, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
		return true
	case (op == OpMapRead || op == OpMapWrite) && errors.Is(err, unix.ENODEV):
		return true
	}
	return false
}

func (r *run) historyText() string {
	s := ""
	for _, h := range r.history {
		s += "  " + h + "\n"
	}
	return s
}

func (r *run) do(op Op, f *os.File) error {
	size := int64(len(r.model))
	switch op {
	case OpRead:
		off, n := r.span(size)
		return r.read(f, off, n)
	case OpWrite:
		off, n := r.span(r.cfg.MaxSize)
		return r.write(f, off, n)
	case OpMapRead:
		off, n := r.span(size)
		return r.mapRead(f, off, n)
	case OpMapWrite:
		off, n := r.span(r.cfg.MaxSize)
		return r.mapWrite(f, off, n)
	case OpTruncate:
		return r.truncate(f, r.rng.Int64N(r.cfg.MaxSize+1))
	case OpFallocate:
		off, n := r.span(r.cfg.MaxSize)
		return r.fallocate(f, off, n, r.rng.IntN(2) == 0)
	case OpPunchHole:
		off, n := r.span(size)
		return r.punch(f, off, n)
	case OpZeroRange:
		off, n := r.span(r.cfg.MaxSize)
		return r.zeroRange(f, off, n, r.rng.IntN(2) == 0)
	case OpFsync:
		r.note("fsync %s", f.Name())
		return f.Sync()
	case OpReopen:
		r.note("close and reopen")
		if err := r.closeAll(); err != nil {
			return err
		}
		if err := r.open(false); err != nil {
			return err
		}
		return r.checkSize(r.files[0])
	}
	return nil
}

func (r *run) read(f *os.File, off, n int64) error {
	r.note("read %#x len %#x", off, n)
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, off)
	if err != nil && !(errors.Is(err, io.EOF) && int64(got) == n) {
		if n == 0 && errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("pread %#x len %#x: %w (read %d)", off, n, err, got)
	}
	return r.compare("read", off, buf[:got], r.model[off:off+n])
}

// fill returns n pseudo-random bytes that also encode their offset, so a
// byte written to the wrong place is seen as wrong.
func (r *run) fill(off, n int64) []byte {
	b := make([]byte, n)
	salt := byte(r.rng.Uint32())
	for i := range b {
		b[i] = byte(off+int64(i)) ^ salt ^ byte((off+int64(i))>>8)
	}
	return b
}

func (r *run) extend(to int64) {
	if to > int64(len(r.model)) {
		r.model = append(r.model, make([]byte, to-int64(len(r.model)))...)
	}
}

func (r *run) write(f *os.File, off, n int64) error {
	r.note("write %#x len %#x (size %#x)", off, n, len(r.model))
	data := r.fill(off, n)
	if _, err := f.WriteAt(data, off); err != nil {
		return fmt.Errorf("pwrite %#x len %#x: %w", off, n, err)
	}
	r.extend(off + n)
	copy(r.model[off:], data)
	return nil
}

// mapping maps the pages covering [off, off+n) and returns them with the
// index of off in them.
func (r *run) mapping(f *os.File, off, n int64, prot int) ([]byte, int64, error) {
	start := off - off%r.pageSize
	m, err := unix.Mmap(int(f.Fd()), start, int(off+n-start), prot, unix.MAP_SHARED)
	if err != nil {
		return nil, 0, fmt.Errorf("mmap %#x len %#x: %w", start, off+n-start, err)
	}
	return m, off - start, nil
}

func (r *run) mapRead(f *os.File, off, n int64) error {
	if n == 0 {
		return nil
	}
	r.note("mapread %#x len %#x", off, n)
	// As a program that maps a file does, learn its size first: a page
	// past the end of the file faults (SIGBUS), so a size this path
	// sees stale (the file grown through another path) must be caught
	// here as a mismatch rather than kill the run.
	if err := r.checkSize(f); err != nil {
		return err
	}
	m, at, err := r.mapping(f, off, n, unix.PROT_READ)
	if err != nil {
		return err
	}
	got, err := r.touch(func() []byte { return slices.Clone(m[at : at+n]) })
	if err != nil {
		unix.Munmap(m)
		return err
	}
	if err := unix.Munmap(m); err != nil {
		return fmt.Errorf("munmap: %w", err)
	}
	return r.compare("mapread", off, got, r.model[off:off+n])
}

// touch runs fn, which reads or writes a mapping, and reports a fault
// in it (SIGBUS: the page is past the end of the file as the kernel sees
// it, or the file system failed to read it in) as a mismatch with the
// operations before it, as fsx does, rather than a crash.
func (r *run) touch(fn func() []byte) (b []byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			r.note("fault touching the mapping: %v", p)
			err = &MismatchError{Seed: r.cfg.Seed, Index: r.index, Op: "mmap fault", Offset: -1, History: slices.Clone(r.history)}
		}
	}()
	return fn(), nil
}

func (r *run) mapWrite(f *os.File, off, n int64) error {
	if n == 0 {
		return nil
	}
	r.note("mapwrite %#x len %#x (size %#x)", off, n, len(r.model))
	if end := off + n; end > int64(len(r.model)) {
		// A mapping cannot grow a file: fsx extends it first.
		if err := f.Truncate(end); err != nil {
			return fmt.Errorf("ftruncate %#x before mapwrite: %w", end, err)
		}
		r.extend(end)
	} else if err := r.checkSize(f); err != nil { // as mapRead
		return err
	}
	m, at, err := r.mapping(f, off, n, unix.PROT_READ|unix.PROT_WRITE)
	if err != nil {
		return err
	}
	data := r.fill(off, n)
	if _, err := r.touch(func() []byte { copy(m[at:], data); return nil }); err != nil {
		unix.Munmap(m)
		return err
	}
	err = unix.Msync(m, unix.MS_SYNC)
	if uerr := unix.Munmap(m); err == nil && uerr != nil {
		err = uerr
	}
	if err != nil {
		return fmt.Errorf("msync/munmap: %w", err)
	}
	copy(r.model[off:], data)
	return nil
}

func (r *run) truncate(f *os.File, size int64) error {
	r.note("truncate %#x -> %#x", len(r.model), size)
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("ftruncate %#x: %w", size, err)
	}
	if size < int64(len(r.model)) {
		r.model = r.model[:size]
	} else {
		r.extend(size)
	}
	return r.checkSize(f)
}

func (r *run) fallocate(f *os.File, off, n int64, keepSize bool) error {
	if n == 0 {
		return nil
	}
	mode := uint32(0)
	if keepSize {
		mode = unix.FALLOC_FL_KEEP_SIZE
	}
	r.note("fallocate %#x len %#x keep_size=%v (size %#x)", off, n, keepSize, len(r.model))
	if err := unix.Fallocate(int(f.Fd()), mode, off, n); err != nil {
		return fmt.Errorf("fallocate: %w", err)
	}
	if !keepSize {
		r.extend(off + n)
	}
	return r.checkSize(f)
}

func (r *run) punch(f *os.File, off, n int64) error {
	if n == 0 {
		return nil
	}
	r.note("punch_hole %#x len %#x", off, n)
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n); err != nil {
		return fmt.Errorf("punch hole: %w", err)
	}
	clear(r.model[off : off+n])
	return r.checkSize(f)
}

func (r *run) zeroRange(f *os.File, off, n int64, keepSize bool) error {
	if n == 0 {
		return nil
	}
	mode := uint32(unix.FALLOC_FL_ZERO_RANGE)
	if keepSize {
		mode |= unix.FALLOC_FL_KEEP_SIZE
	}
	r.note("zero_range %#x len %#x keep_size=%v (size %#x)", off, n, keepSize, len(r.model))
	if err := unix.Fallocate(int(f.Fd()), mode, off, n); err != nil {
		return fmt.Errorf("zero range: %w", err)
	}
	end := min(off+n, int64(len(r.model)))
	if off < end {
		clear(r.model[off:end])
	}
	if !keepSize {
		r.extend(off + n)
	}
	return r.checkSize(f)
}

func (r *run) checkSize(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("fstat: %w", err)
	}
	if st.Size() != int64(len(r.model)) {
		r.note("size is %#x, the model says %#x", st.Size(), len(r.model))
		return &MismatchError{Seed: r.cfg.Seed, Index: r.index, Op: "fstat", Offset: -1,
			History: slices.Clone(r.history)}
	}
	return nil
}

func (r *run) compare(op string, off int64, got, want []byte) error {
	if len(got) != len(want) {
		r.note("%s returned %d bytes, the model has %d", op, len(got), len(want))
		return &MismatchError{Seed: r.cfg.Seed, Index: r.index, Op: op, Offset: -1, History: slices.Clone(r.history)}
	}
	for i := range got {
		if got[i] != want[i] {
			end := min(i+16, len(got))
			return &MismatchError{Seed: r.cfg.Seed, Index: r.index, Op: op, Offset: off + int64(i),
				Want: slices.Clone(want[i:end]), Got: slices.Clone(got[i:end]), History: slices.Clone(r.history)}
		}
	}
	return nil
}

// verifyAll reads the whole file through every path and checks it.
func (r *run) verifyAll() error {
	for _, f := range r.files {
		if err := r.checkSize(f); err != nil {
			return err
		}
		got := make([]byte, len(r.model))
		if _, err := f.ReadAt(got, 0); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("fsx: final read of %s: %w", f.Name(), err)
		}
		r.note("final read of %s", f.Name())
		if err := r.compare("final read", 0, got, r.model); err != nil {
			return err
		}
	}
	return nil
}

package blocktest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// fioProgress is what a fio status report says: the bytes its job has
// read and written (completed requests only) and its error.
type fioProgress struct {
	Read, Written int64
	Error         int
}

// fioRun is a fio process whose JSON status reports (four a second) the
// test follows.
type fioRun struct {
	t       *testing.T
	mu      sync.Mutex
	last    fioProgress
	changed chan struct{} // closed at the next report or at the end
	ended   bool
	out     strings.Builder // everything fio printed
	err     error           // fio's exit, once ended
	done    chan struct{}
}

// startFio runs fio with args plus JSON status reports every 250 ms.
func startFio(t *testing.T, args ...string) *fioRun {
	t.Helper()
	f := &fioRun{t: t, changed: make(chan struct{}), done: make(chan struct{})}
	cmd := exec.Command("fio", append(args, "--output-format=json", "--status-interval=250ms")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-f.done:
		default:
			_ = cmd.Process.Kill()
			<-f.done
		}
	})
	go func() {
		// Each report is a JSON object from a line "{" to a line "}";
		// fio prints other lines (e.g. "fio: connected to NBD server")
		// between them.
		var obj []string
		scanLines(stdout, func(line string) {
			f.mu.Lock()
			f.out.WriteString(line + "\n")
			f.mu.Unlock()
			switch {
			case line == "{":
				obj = []string{line}
			case obj != nil:
				obj = append(obj, line)
				if line == "}" {
					f.report(strings.Join(obj, "\n"))
					obj = nil
				}
			}
		})
		err := cmd.Wait()
		f.mu.Lock()
		f.err, f.ended = err, true
		close(f.changed)
		f.mu.Unlock()
		close(f.done)
	}()
	return f
}

func (f *fioRun) report(js string) {
	var r struct {
		Jobs []struct {
			Error int `json:"error"`
			Read  struct {
				IOBytes int64 `json:"io_bytes"`
			} `json:"read"`
			Write struct {
				IOBytes int64 `json:"io_bytes"`
			} `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil || len(r.Jobs) != 1 {
		return // not a status report
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = fioProgress{Read: r.Jobs[0].Read.IOBytes, Written: r.Jobs[0].Write.IOBytes, Error: r.Jobs[0].Error}
	close(f.changed)
	f.changed = make(chan struct{})
}

// until waits for a report that satisfies cond and returns it, with
// running false if fio ended first.
func (f *fioRun) until(cond func(fioProgress) bool) (p fioProgress, running bool) {
	for {
		f.mu.Lock()
		p, ended, ch := f.last, f.ended, f.changed
		f.mu.Unlock()
		if cond(p) {
			return p, !ended
		}
		if ended {
			return p, false
		}
		<-ch
	}
}

// wait waits for fio to end and returns its last report, failing the
// test if fio failed.
func (f *fioRun) wait() fioProgress {
	f.t.Helper()
	<-f.done
	if f.err != nil || f.last.Error != 0 {
		f.t.Fatalf("fio: %v (job error %d)\n%s", f.err, f.last.Error, lastLines(f.out.String(), 60))
	}
	return f.last
}

// fioArgs are a fio job on uri writing size bytes in 16 KiB blocks at
// random (every block once), 16 in flight, each block carrying a header
// and its crc32c: with verifyOnly, the job reads them back instead and
// fails at the first block whose header or checksum is wrong (a block
// never written, torn, or another's).
func fioArgs(uri string, size int64, seed int, verifyOnly bool) []string {
	a := []string{"--name=v", "--ioengine=nbd", "--uri=" + uri, "--rw=randwrite", "--bs=16k", "--iodepth=16",
		fmt.Sprintf("--size=%d", size), "--verify=crc32c", "--verify_fatal=1", "--verify_state_save=0", fmt.Sprintf("--randseed=%d", seed)}
	if verifyOnly {
		return append(a, "--verify_only")
	}
	return append(a, "--do_verify=0")
}

// fioBlock is 16 KiB, the blocks fioArgs writes.
const fioBlock = 16 << 10

// fioBlocks checks an image's bytes written by fioArgs' job: each 16 KiB
// block is either all zeros (never written) or a whole block of fio's,
// its header naming its own offset and both crc32c checksums right (fio's
// verify header: magic 0xacca, type, length, seed, offset, time, thread,
// number, the header's crc32c; then the data's crc32c, over the rest).
// It returns how many blocks hold data, or an error for the first block
// that is neither: torn, mixed or misplaced.
func fioBlocks(img []byte) (written int, _ error) {
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	le := binary.LittleEndian
	for off := 0; off+fioBlock <= len(img); off += fioBlock {
		b := img[off : off+fioBlock]
		if bytes.Equal(b, make([]byte, fioBlock)) {
			continue
		}
		// fio's crc32c is the complement of the usual one.
		switch {
		case le.Uint16(b) != 0xacca || le.Uint32(b[4:]) != fioBlock:
			return written, fmt.Errorf("block at %d: no fio header (% x)", off, b[:8])
		case le.Uint64(b[16:]) != uint64(off):
			return written, fmt.Errorf("block at %d: fio wrote it at %d", off, le.Uint64(b[16:]))
		case ^crc32.Checksum(b[:36], castagnoli) != le.Uint32(b[36:]):
			return written, fmt.Errorf("block at %d: header checksum wrong", off)
		case ^crc32.Checksum(b[44:], castagnoli) != le.Uint32(b[40:]):
			return written, fmt.Errorf("block at %d: data checksum wrong (torn or mixed)", off)
		}
		written++
	}
	return written, nil
}

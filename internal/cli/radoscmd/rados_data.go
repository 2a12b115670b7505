package radoscmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/rados"
)

// Objects move in pieces of radosChunk bytes, radosWindow of them in
// flight: a put or get holds at most radosWindow pieces in memory.
const (
	radosChunk  = 4 << 20
	radosWindow = 4
)

// streamer moves data between a stream and an object in pieces.
type streamer struct {
	chunk  int
	window int
}

// defaultStreamer moves radosChunk pieces, radosWindow in flight.
func defaultStreamer() streamer { return streamer{chunk: radosChunk, window: radosWindow} }

// putCleanupTimeout bounds the removal of what a failed put wrote. The
// removal has its own deadline: the put may have failed because its
// context was cancelled.
const putCleanupTimeout = 30 * time.Second

// waiter is an operation in flight (a *rados.Completion).
type waiter interface {
	Wait(ctx context.Context) error
}

// putTarget is what put writes to: an object in a pool (ioTarget), or in
// tests a wrapper that injects faults.
type putTarget interface {
	writeFull(ctx context.Context, name string, data []byte) waiter
	writeAt(ctx context.Context, name string, data []byte, off uint64) waiter
	remove(ctx context.Context, name string) error
	// rmCommand is the command that removes object name by hand.
	rmCommand(name string) string
}

// ioTarget writes to the objects of an IOContext's pool and namespace.
type ioTarget struct{ ioc *rados.IOContext }

func (t ioTarget) writeFull(ctx context.Context, name string, data []byte) waiter {
	return t.ioc.WriteFullAsync(ctx, name, data)
}

func (t ioTarget) writeAt(ctx context.Context, name string, data []byte, off uint64) waiter {
	return t.ioc.WriteAsync(ctx, name, data, off)
}

func (t ioTarget) remove(ctx context.Context, name string) error { return t.ioc.Delete(ctx, name) }

func (t ioTarget) rmCommand(name string) string {
	cmd := "cuttle rados -p " + shellQuote(t.ioc.PoolName())
	if ns := t.ioc.Namespace(); ns != "" {
		cmd += " -N " + shellQuote(ns)
	}
	return cmd + " rm " + shellQuote(name)
}

// shellQuote quotes s for a POSIX shell, if it needs quoting.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@%+=,", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// partialObjectError is a put (or cp) that failed after it may have
// written part of its object: Removed says whether it removed the object
// again; if not, Written bytes of the input were written (-1: unknown)
// and RemoveErr says why the object could not be removed.
type partialObjectError struct {
	Err       error // why the put failed
	Removed   bool
	Written   int64
	RemoveErr error
	RmCommand string
}

func (e *partialObjectError) Error() string {
	if e.Removed {
		return e.Err.Error() + "; the partly written object has been removed (the data it had before is lost)"
	}
	written := ""
	if e.Written >= 0 {
		written = fmt.Sprintf(" (%d bytes of the input written)", e.Written)
	}
	return fmt.Sprintf("%v; a partial object remains%s and could not be removed (%v): remove it with: %s",
		e.Err, written, e.RemoveErr, e.RmCommand)
}

func (e *partialObjectError) Unwrap() error { return e.Err }

// unchangedObjectError is a put whose every write the OSDs refused: the
// object was left as it was.
type unchangedObjectError struct{ Err error }

func (e *unchangedObjectError) Error() string {
	return e.Err.Error() + "; nothing was written: the object is as it was"
}

func (e *unchangedObjectError) Unwrap() error { return e.Err }

// removePartial removes object name after a write of it failed with err
// part way, with its own deadline, and returns err with what became of
// the object. An object already gone counts as removed.
func removePartial(ctx context.Context, t putTarget, name string, err error, written int64) error {
	var pe *partialObjectError
	if errors.As(err, &pe) {
		return err // the put inside already cleaned up
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), putCleanupTimeout)
	defer cancel()
	rerr := t.remove(ctx, name)
	if rerr == nil || errors.Is(rerr, rados.ErrNotFound) {
		return &partialObjectError{Err: err, Removed: true}
	}
	return &partialObjectError{Err: err, Written: written, RemoveErr: rerr, RmCommand: t.rmCommand(name)}
}

// put writes everything r yields to object name, replacing its data: the
// first piece with WriteFull, the others with writes at their offsets,
// window of them in flight (one client's ops on one object apply in
// order). It returns the bytes written.
//
// An input of one piece is one WriteFull, atomic: if it fails the object
// is as it was; so it is when the OSDs refused every write of a larger
// one (a full pool). If a larger put fails otherwise (a write refused, the input
// unreadable, ctx cancelled), the object may hold part of the input, so
// put removes it (best effort, see removePartial) and says so in its
// error (*partialObjectError); the object's old data cannot be restored.
func (s streamer) put(ctx context.Context, ioc *rados.IOContext, name string, r io.Reader) (int64, error) {
	return s.putTo(ctx, ioTarget{ioc}, name, r)
}

func (s streamer) putTo(ctx context.Context, t putTarget, name string, r io.Reader) (int64, error) {
	type piece struct {
		buf []byte
		n   int
		op  waiter
	}
	var (
		inflight []piece
		free     [][]byte
		off      int64
		written  int64 // bytes of pieces that were acknowledged
		pieces   int   // writes issued
		ended    bool  // the input was read to its end
		firstErr error
		// maybeApplied: some write was acknowledged, or ended without an
		// answer that says it was not applied.
		maybeApplied bool
	)
	wait := func() {
		p := inflight[0]
		inflight = inflight[1:]
		if err := p.op.Wait(ctx); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			// An OSD's answer refused the write: it was not applied.
			// Anything else (a timeout, a cancel) may have been.
			var oe *rados.OpError
			maybeApplied = maybeApplied || !errors.As(err, &oe)
		} else {
			written += int64(p.n)
			maybeApplied = true
		}
		free = append(free, p.buf)
	}
	for firstErr == nil {
		var buf []byte
		switch {
		case len(free) > 0:
			buf, free = free[len(free)-1], free[:len(free)-1]
		case len(inflight) < s.window:
			buf = make([]byte, s.chunk)
		default:
			wait()
			continue
		}
		n, rerr := readFull(r, buf)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			firstErr = fmt.Errorf("read input: %w", rerr)
			break
		}
		ended = rerr != nil
		if n > 0 || off == 0 {
			var op waiter
			if off == 0 {
				op = t.writeFull(ctx, name, buf[:n])
			} else {
				op = t.writeAt(ctx, name, buf[:n], uint64(off))
			}
			inflight = append(inflight, piece{buf, n, op})
			pieces++
			off += int64(n)
		}
		if ended {
			break
		}
	}
	for len(inflight) > 0 {
		wait()
	}
	if firstErr == nil {
		return off, nil
	}
	if pieces == 0 || pieces == 1 && ended {
		return written, firstErr // nothing written, or one atomic write
	}
	if !maybeApplied {
		// Every write was refused (a full pool refuses them all): the
		// object is as it was, and removing it would lose it.
		return written, &unchangedObjectError{firstErr}
	}
	return written, removePartial(ctx, t, name, firstErr, written)
}

// readFull reads until buf is full or the input ends (io.EOF, with the
// bytes read).
func readFull(r io.Reader, buf []byte) (int, error) {
	n, err := io.ReadFull(r, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return n, err
}

// get reads object name in pieces and writes it to the writer open
// returns, which is opened only once the first piece is read (so a
// missing object creates no file). It returns the bytes written.
func (s streamer) get(ctx context.Context, ioc *rados.IOContext, name string, open func() (io.Writer, error)) (int64, error) {
	first, err := ioc.Read(ctx, name, 0, uint64(s.chunk))
	if err != nil {
		return 0, err
	}
	w, err := open()
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(first); err != nil {
		return 0, err
	}
	total := int64(len(first))
	if len(first) < s.chunk {
		return total, nil
	}
	type piece struct {
		step *rados.ReadStep
		comp *rados.Completion
	}
	var inflight []piece
	next := int64(s.chunk)
	ended := false
	var firstErr error
	for {
		for !ended && firstErr == nil && len(inflight) < s.window {
			st, c := ioc.ReadAsync(ctx, name, uint64(next), uint64(s.chunk))
			inflight = append(inflight, piece{st, c})
			next += int64(s.chunk)
		}
		if len(inflight) == 0 {
			return total, firstErr
		}
		p := inflight[0]
		inflight = inflight[1:]
		err := p.comp.Wait(ctx)
		if firstErr != nil || ended {
			continue // drain what is in flight
		}
		if err != nil {
			firstErr = err
			continue
		}
		if _, err := w.Write(p.step.Data); err != nil {
			firstErr = err
			continue
		}
		total += int64(len(p.step.Data))
		if len(p.step.Data) < s.chunk {
			ended = true
		}
	}
}

func radosPutCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "put OBJECT FILE|-",
		Short: "Store FILE (or standard input) as OBJECT, replacing its data",
		Long: `Store FILE (or standard input) as OBJECT, replacing its data, in 4 MiB
pieces. Up to 4 MiB is one atomic write: if it fails, OBJECT is as it was.
A larger put that fails part way (a write refused, the input unreadable,
interrupted) removes OBJECT, which may hold part of the input: the data it
had before is lost. If the removal fails too, the error says so and gives
the command that removes what remains.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, file := args[0], args[1]
			var in io.Reader = cmd.InOrStdin()
			if file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				n, err := defaultStreamer().put(ctx, ioc, name, in)
				if err != nil {
					return radosFailure("put "+e.path(name), err)
				}
				r := e.report(name)
				r.Bytes = &n
				return e.printSilent(r)
			})
		},
	}
}

func radosGetCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "get OBJECT FILE|-",
		Short: "Write OBJECT's data to FILE (or standard output)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, file := args[0], args[1]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				closeOut := func() error { return nil }
				n, err := defaultStreamer().get(ctx, ioc, name, func() (io.Writer, error) {
					w, c, err := openOut(e.out, file)
					if err == nil {
						closeOut = c
					}
					return w, err
				})
				if cerr := closeOut(); err == nil {
					err = cerr
				}
				if err != nil {
					return radosFailure("get "+e.path(name), err)
				}
				if file == "-" {
					return nil // the data was the output
				}
				r := e.report(name)
				r.Bytes, r.File = &n, file
				return e.printSilent(r)
			})
		},
	}
}

func radosRmCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "rm OBJECT...",
		Short: "Remove objects",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				var removed []string
				for _, name := range args {
					if err := ioc.Delete(ctx, name); err != nil {
						return radosFailure("rm "+e.path(name), err)
					}
					removed = append(removed, name)
				}
				return e.printSilent(map[string]any{"pool": e.pool, "namespace": e.ns, "removed": removed})
			})
		},
	}
}

// lsEntry is one object of `rados ls --format json`, named as Ceph's.
type lsEntry struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Locator   string `json:"locator,omitempty"`
}

func radosLsCommand(e *radosEnv) *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use:   "ls [FILE|-]",
		Short: "List the pool's objects in the namespace (or every namespace with --all)",
		Long: `List the objects of the pool in the namespace, one per line, to standard
output or FILE. With --all, every namespace, each line "NAMESPACE<TAB>NAME"
as Ceph prints it. An object with a locator key has it after another tab.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) (err error) {
				if all {
					ioc.SetNamespace(rados.AllNamespaces)
				}
				w, closeOut := e.out.W, func() error { return nil }
				if len(args) == 1 && args[0] != "-" {
					if w, closeOut, err = openOut(e.out, args[0]); err != nil {
						return err
					}
				}
				defer func() {
					if cerr := closeOut(); err == nil {
						err = cerr
					}
				}()
				return listObjects(ctx, ioc, &cmdutil.Output{Format: e.out.Format, W: w}, all, e.pool)
			})
		},
	}
	c.Flags().BoolVar(&all, "all", false, "list every namespace")
	return c
}

// lineSafe returns a name (of an object, namespace, locator, attribute
// or omap key) as the plain listings print it, a name a line: as it is
// if every character is printable and it does not begin with a double
// quote; otherwise quoted as a Go string literal ("a\nb", "\x01",
// "\"q", a backslash as \\), which cannot be mistaken for a name printed
// as it is. JSON output keeps names exact.
func lineSafe(s string) string {
	if !strings.HasPrefix(s, `"`) && utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// listObjects prints the objects io lists: plain lines as they come, or
// one JSON array at the end. Plain lines quote names that need it
// (lineSafe).
func listObjects(ctx context.Context, ioc *rados.IOContext, out *cmdutil.Output, all bool, pool string) error {
	bw := newLineWriter(out.W)
	var entries []lsEntry
	for ent, err := range ioc.Objects(ctx) {
		if err != nil {
			return radosFailure("ls "+pool, err)
		}
		if out.Format == cmdutil.FormatJSON {
			entries = append(entries, lsEntry{ent.Namespace, ent.Name, ent.Key})
			continue
		}
		line := lineSafe(ent.Name)
		if all {
			line = lineSafe(ent.Namespace) + "\t" + line
		}
		if ent.Key != "" {
			line += "\t" + lineSafe(ent.Key)
		}
		if err := bw.line(line); err != nil {
			return err
		}
	}
	if out.Format == cmdutil.FormatJSON {
		if entries == nil {
			entries = []lsEntry{}
		}
		return out.Print(entries, nil)
	}
	return bw.flush()
}

// statReport is the JSON form of `rados stat`.
type statReport struct {
	Pool      string `json:"pool"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Size      uint64 `json:"size"`
	MTime     string `json:"mtime"`
	Version   uint64 `json:"version"`
}

// cephLocalTime is how Ceph prints a utime_t in local time.
const cephLocalTime = "2006-01-02T15:04:05.000000-0700"

func radosStatCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "stat OBJECT",
		Short: "Show OBJECT's size and modification time",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				st, err := ioc.Stat(ctx, name)
				if err != nil {
					return radosFailure("stat "+e.path(name), err)
				}
				r := statReport{Pool: e.pool, Namespace: e.ns, Name: name, Size: st.Size,
					MTime: st.ModTime.Local().Format(time.RFC3339Nano), Version: st.Version}
				return e.out.Print(r, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "%s mtime %s, size %d\n", lineSafe(e.path(name)), st.ModTime.Local().Format(cephLocalTime), st.Size)
					return err
				})
			})
		},
	}
}

func radosCpCommand(e *radosEnv) *cobra.Command {
	var targetPool, targetNS string
	c := &cobra.Command{
		Use:   "cp SOURCE TARGET",
		Short: "Copy an object: data, extended attributes and omap",
		Long: `Copy object SOURCE to TARGET, in the same pool and namespace unless
--target-pool or --target-nspace say otherwise. TARGET is replaced: it is
removed first, then written. The copy is not atomic: if it fails part way
it removes TARGET again (its old data is lost), or, if that fails too,
says how to remove what remains.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, dst := args[0], args[1]
			ctx := cmd.Context()
			conn, from, err := e.open(ctx)
			if err != nil {
				return err
			}
			defer conn.Close()
			to := from
			if targetPool != "" || cmd.Flags().Changed("target-nspace") {
				tp := cmp.Or(targetPool, e.pool)
				if to, err = conn.OpenIOContext(tp); err != nil {
					return radosFailure(tp, err)
				}
				to.SetNamespace(e.ns)
				if cmd.Flags().Changed("target-nspace") {
					to.SetNamespace(targetNS)
				}
			}
			if to.PoolID() == from.PoolID() && to.Namespace() == from.Namespace() && src == dst {
				return fmt.Errorf("cp: %s is both the source and the target", e.path(src))
			}
			if err := copyObject(ctx, from, src, to, dst); err != nil {
				return radosFailure("cp "+e.path(src), err)
			}
			return e.printSilent(map[string]string{"pool": e.pool, "namespace": e.ns, "source": src,
				"target_pool": to.PoolName(), "target_namespace": to.Namespace(), "target": dst})
		},
	}
	c.Flags().StringVar(&targetPool, "target-pool", "", "pool of TARGET (default: the source's)")
	c.Flags().StringVar(&targetNS, "target-nspace", "", "namespace of TARGET (default: the source's)")
	return c
}

// copyObject copies src's data, extended attributes, omap header and
// omap entries to dst, replacing dst: it removes dst, then writes it in
// several operations. If one fails, it removes dst again (best effort,
// as a failed put does) and says so in its error.
func copyObject(ctx context.Context, from *rados.IOContext, src string, to *rados.IOContext, dst string) error {
	r := rados.NewReadOp()
	xs := r.GetXattrs()
	hdr := r.GetOmapHeader()
	if err := from.OperateRead(ctx, src, r); err != nil {
		return err
	}
	if err := to.Delete(ctx, dst); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("remove the target: %w", err)
	}
	if err := writeCopy(ctx, from, src, to, dst, xs.Attrs, hdr.Data); err != nil {
		return removePartial(ctx, ioTarget{to}, dst, err, -1)
	}
	return nil
}

// writeCopy writes dst, which does not exist, from src.
func writeCopy(ctx context.Context, from *rados.IOContext, src string, to *rados.IOContext, dst string, attrs map[string][]byte, header []byte) error {
	// The data streams through a pipe from the source's reads to the
	// target's writes.
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		_, err := defaultStreamer().get(ctx, from, src, func() (io.Writer, error) { return pw, nil })
		pw.CloseWithError(err)
		errc <- err
	}()
	_, err := defaultStreamer().put(ctx, to, dst, pr)
	pr.CloseWithError(errors.New("copy ended"))
	if gerr := <-errc; gerr != nil && err == nil {
		err = gerr
	}
	if err != nil {
		return err
	}
	if len(attrs) > 0 || len(header) > 0 {
		w := rados.NewWriteOp()
		for k, v := range attrs {
			w.SetXattr(k, v)
		}
		if len(header) > 0 {
			w.SetOmapHeader(header)
		}
		if err := to.OperateWrite(ctx, dst, w); err != nil {
			return err
		}
	}
	return forOmap(ctx, from, src, func(batch []rados.KeyValue) error {
		m := make(map[string][]byte, len(batch))
		for _, kv := range batch {
			m[kv.Key] = kv.Value
		}
		return to.SetOmap(ctx, dst, m)
	})
}

// omapBatch is how many omap entries are read at a time.
const omapBatch = 1000

// forOmap calls f with the omap entries of object name, in key order, a
// batch at a time.
func forOmap(ctx context.Context, ioc *rados.IOContext, name string, f func([]rados.KeyValue) error) error {
	after := ""
	for {
		kvs, more, err := ioc.GetOmapValues(ctx, name, after, "", omapBatch)
		if err != nil {
			return err
		}
		if len(kvs) > 0 {
			if err := f(kvs); err != nil {
				return err
			}
			after = kvs[len(kvs)-1].Key
		}
		if !more || len(kvs) == 0 {
			return nil
		}
	}
}

package radoscmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// DialFunc connects to the cluster (cmdutil.DialFunc).
type DialFunc = cmdutil.DialFunc

// radosEnv is what every `cuttle rados` command shares: how to connect,
// where to print, and the pool and namespace flags.
type radosEnv struct {
	out  *cmdutil.Output
	dial DialFunc
	pool string
	ns   string
	snap string // -s: the snapshot reads read at (rados_snaps.go)
}

// AddRadosCommands adds "cuttle rados", the object tool (Ceph's rados),
// which connects with dial.
func AddRadosCommands(root *cobra.Command, out *cmdutil.Output, dial DialFunc) {
	root.AddCommand(newRadosCommand(out, dial))
}

func newRadosCommand(out *cmdutil.Output, dial DialFunc) *cobra.Command {
	e := &radosEnv{out: out, dial: dial}
	c := &cobra.Command{
		Use:   "rados -p POOL COMMAND ...",
		Short: "Store, fetch, list and inspect objects in a pool (Ceph's rados tool)",
		Long: `Object commands on one pool (-p) and namespace (-N), through the rados
client library. FILE "-" is standard input or output. Data moves in 4 MiB
pieces, so objects of any size stream without being held in memory.`,
	}
	pf := c.PersistentFlags()
	pf.StringVarP(&e.pool, "pool", "p", "", "pool to work in (required)")
	pf.StringVarP(&e.ns, "namespace", "N", "", "namespace of the objects (default: the default namespace)")
	pf.StringVarP(&e.snap, "snap", "s", "", "read at pool snapshot `SNAP` (a name, or an id for self-managed snapshots); writes still go to the head")
	c.AddCommand(
		radosPutCommand(e), radosGetCommand(e), radosRmCommand(e), radosLsCommand(e),
		radosStatCommand(e), radosCpCommand(e),
		radosSetXattrCommand(e), radosGetXattrCommand(e), radosListXattrCommand(e), radosRmXattrCommand(e),
		radosSetOmapValCommand(e), radosGetOmapValCommand(e), radosRmOmapKeyCommand(e),
		radosListOmapKeysCommand(e), radosListOmapValsCommand(e),
		radosMksnapCommand(e), radosRmsnapCommand(e), radosLssnapCommand(e),
		radosRollbackCommand(e), radosListsnapsCommand(e),
		radosWatchCommand(e), radosNotifyCommand(e), radosListWatchersCommand(e),
	)
	return c
}

// open connects and opens the pool and namespace of the flags; the
// caller closes the connection.
func (e *radosEnv) open(ctx context.Context) (*rados.Conn, *rados.IOContext, error) {
	if e.pool == "" {
		return nil, nil, errors.New("no pool: give -p POOL")
	}
	conn, err := e.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	ioc, err := conn.OpenIOContext(e.pool)
	if err != nil {
		conn.Close()
		return nil, nil, radosFailure(e.pool, err)
	}
	ioc.SetNamespace(e.ns)
	if e.snap != "" {
		id, err := snapArg(ioc, e.snap)
		if err != nil {
			conn.Close()
			return nil, nil, err
		}
		ioc.SetReadSnap(id)
	}
	return conn, ioc, nil
}

// with runs f on the pool of the flags.
func (e *radosEnv) with(cmd *cobra.Command, f func(ctx context.Context, ioc *rados.IOContext) error) error {
	conn, ioc, err := e.open(cmd.Context())
	if err != nil {
		return err
	}
	defer conn.Close()
	return f(cmd.Context(), ioc)
}

// path names an object for messages as Ceph's rados does: pool/name, or
// pool/namespace/name.
func (e *radosEnv) path(name string) string {
	if e.ns != "" {
		return e.pool + "/" + e.ns + "/" + name
	}
	return e.pool + "/" + name
}

// cliError is a failure told plainly, keeping the library's error for
// errors.Is.
type cliError struct {
	msg string
	err error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }

// radosFailure is the one table from the client library's error classes
// to what the CLI says about what (an object's path, or a pool).
func radosFailure(what string, err error) error {
	if err == nil {
		return nil
	}
	var (
		text string
		oe   *rados.OpError
	)
	switch {
	case errors.Is(err, rados.ErrPoolNotFound):
		return &cliError{fmt.Sprintf("pool %s does not exist", what), err}
	case errors.Is(err, rados.ErrNotFound):
		text = "no such object"
	case errors.Is(err, rados.ErrNoAttr):
		text = "no such attribute"
	case errors.Is(err, rados.ErrPermission):
		text = "permission denied"
	case errors.Is(err, rados.ErrExists):
		text = "already exists"
	case errors.Is(err, rados.ErrTimedOut):
		text = "timed out: " + err.Error()
	case errors.Is(err, rados.ErrNotConnected):
		text = err.Error()
	case errors.Is(err, rados.ErrInvalid):
		text = "invalid argument: " + err.Error()
	case errors.As(err, &oe) && oe.Errno == wire.ENOSPC && oe.Status != "":
		text = oe.Status + " (ENOSPC)" + afterOpError(err, oe)
	case errors.As(err, &oe) && oe.Errno == wire.ENOSPC:
		text = "no space left on the OSDs (ENOSPC)" + afterOpError(err, oe)
	default:
		text = err.Error()
	}
	return &cliError{what + ": " + text, err}
}

// afterOpError is what err says after the text of the OpError it wraps
// (what became of a partly written object), or "".
func afterOpError(err error, oe *rados.OpError) string {
	_, after, _ := strings.Cut(err.Error(), oe.Error())
	return after
}

// objectReport is the JSON result of commands that change one object.
type objectReport struct {
	Pool      string `json:"pool"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Bytes     *int64 `json:"bytes,omitempty"`
	Attr      string `json:"attr,omitempty"`
	Key       string `json:"key,omitempty"`
	File      string `json:"file,omitempty"`
}

func (e *radosEnv) report(name string) objectReport {
	return objectReport{Pool: e.pool, Namespace: e.ns, Name: name}
}

// printSilent prints r in JSON; plain output says nothing, as Ceph's
// rados says nothing after a successful change.
func (e *radosEnv) printSilent(r any) error {
	return e.out.Print(r, func(io.Writer) error { return nil })
}

// valueArg returns args[i] if given, else standard input, as the value
// of setxattr and setomapval.
func valueArg(cmd *cobra.Command, args []string, i int) ([]byte, error) {
	if len(args) > i {
		return []byte(args[i]), nil
	}
	b, err := io.ReadAll(cmd.InOrStdin())
	if err != nil {
		return nil, fmt.Errorf("read the value from standard input: %w", err)
	}
	return b, nil
}

// openOut opens the output file of get-like commands: "-" is the
// command's standard output. The returned function closes it and reports
// the close's error.
func openOut(out *cmdutil.Output, file string) (io.Writer, func() error, error) {
	if file == "-" {
		return out.W, func() error { return nil }, nil
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

// lineWriter writes lines through a buffer.
type lineWriter struct{ w *bufio.Writer }

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{bufio.NewWriter(w)} }

func (l *lineWriter) line(s string) error {
	if _, err := l.w.WriteString(s); err != nil {
		return err
	}
	return l.w.WriteByte('\n')
}

func (l *lineWriter) flush() error { return l.w.Flush() }

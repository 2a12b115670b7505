package rbdcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/rbd"
)

// DialFunc connects to the cluster (cmdutil.DialFunc).
type DialFunc = cmdutil.DialFunc

// env is what every `cuttle rbd` command shares.
type env struct {
	out  *cmdutil.Output
	dial DialFunc
	pool string // -p: the pool of specs that name none
}

// AddRBDCommands adds "cuttle rbd", which connects with dial.
func AddRBDCommands(root *cobra.Command, out *cmdutil.Output, dial DialFunc) {
	root.AddCommand(newRBDCommand(out, dial))
}

func newRBDCommand(out *cmdutil.Output, dial DialFunc) *cobra.Command {
	e := &env{out: out, dial: dial}
	c := &cobra.Command{
		Use:   "rbd COMMAND ...",
		Short: "Create, inspect, resize and snapshot block images (Ceph's rbd tool)",
		Long: `Block image commands. An image is named "[pool/]image", a snapshot
"[pool/]image@snap"; the pool defaults to -p (default rbd). docs/RBD.md
describes images, their objects and snapshots.`,
	}
	c.PersistentFlags().StringVarP(&e.pool, "pool", "p", "rbd", "pool of images named without one")
	snap := &cobra.Command{Use: "snap COMMAND ...", Short: "Create, list, remove and roll back to snapshots of an image"}
	snap.AddCommand(snapCreateCommand(e), snapLsCommand(e), snapRmCommand(e), snapRollbackCommand(e),
		snapProtectCommand(e), snapUnprotectCommand(e))
	c.AddCommand(createCommand(e), lsCommand(e), infoCommand(e), resizeCommand(e), rmCommand(e),
		renameCommand(e), cpCommand(e), benchCommand(e), duCommand(e), objectMapCommand(e),
		importCommand(e), exportCommand(e), exportDiffCommand(e), importDiffCommand(e), snap,
		cloneCommand(e), flattenCommand(e), childrenCommand(e))
	return c
}

// spec is a parsed "[pool/]image[@snap]".
type spec struct{ pool, image, snap string }

func (s spec) String() string {
	out := s.pool + "/" + s.image
	if s.snap != "" {
		out += "@" + s.snap
	}
	return out
}

// parseSpec parses arg; snap says whether a snapshot must (1), may (0)
// or must not (-1) be named.
func (e *env) parseSpec(arg string, snap int) (spec, error) {
	s := spec{pool: e.pool, image: arg}
	if p, rest, ok := strings.Cut(arg, "/"); ok {
		s.pool, s.image = p, rest
	}
	if i, sn, ok := strings.Cut(s.image, "@"); ok {
		s.image, s.snap = i, sn
	}
	switch {
	case s.pool == "" || s.image == "" || strings.Contains(s.image, "/") || (strings.Contains(arg, "@") && s.snap == ""):
		return s, fmt.Errorf("bad image spec %q: want [pool/]image[@snap] (EINVAL)", arg)
	case snap > 0 && s.snap == "":
		return s, fmt.Errorf("no snapshot in %q: want [pool/]image@snap (EINVAL)", arg)
	case snap < 0 && s.snap != "":
		return s, fmt.Errorf("%q names a snapshot; name the image alone (EINVAL)", arg)
	}
	return s, nil
}

// withPool connects and runs f on the images of pool.
func (e *env) withPool(cmd *cobra.Command, pool string, f func(ctx context.Context, p *rbd.Pool) error) error {
	conn, err := e.dial(cmd.Context())
	if err != nil {
		return err
	}
	defer conn.Close()
	p, err := rbd.NewPool(conn, pool, rbd.Options{})
	if err != nil {
		return rbdFailure(err)
	}
	return rbdFailure(f(cmd.Context(), p))
}

// withImage connects and runs f on the image (at the snapshot) of s.
func (e *env) withImage(cmd *cobra.Command, s spec, o rbd.OpenOptions, f func(ctx context.Context, p *rbd.Pool, img *rbd.Image) error) error {
	return e.withPool(cmd, s.pool, func(ctx context.Context, p *rbd.Pool) error {
		img, err := p.Open(ctx, s.image, o)
		if err != nil {
			return err
		}
		// Closing releases the exclusive lock a change took, so that the
		// next command need not wait for this one's watch to time out.
		return errors.Join(f(ctx, p, img), img.Close(ctx))
	})
}

// cliError is a failure told plainly, keeping the library's error for
// errors.Is.
type cliError struct {
	msg string
	err error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }

// rbdFailure is the one place the CLI rewords the library's errors: the
// library's messages already name the image and end with the errno; a
// missing pool says how to list them.
func rbdFailure(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rados.ErrPoolNotFound):
		return &cliError{strings.TrimPrefix(err.Error(), "rbd: ") + " (ENOENT); cuttle osd pool ls lists the pools", err}
	}
	return &cliError{strings.TrimPrefix(err.Error(), "rbd: "), err}
}

// printSilent prints r in JSON; plain output says nothing, as Ceph's rbd
// says nothing after a successful change.
func (e *env) printSilent(r any) error {
	return e.out.Print(r, func(io.Writer) error { return nil })
}

// imageReport is the JSON result of commands that change an image.
type imageReport struct {
	Pool  string `json:"pool"`
	Image string `json:"image"`
	Snap  string `json:"snapshot,omitempty"`
	Size  uint64 `json:"size,omitempty"`
}

// Package fscmd is the client-side file-system commands: `cuttle fs stat`
// and `cuttle fs lsdir`, which reach a file system through the fsclient
// library with the cluster configuration, no mount needed, and offer
// its POSIX HPC extensions (statlite, readdirplus) from the shell. The
// MDS-map commands of the same `fs` group are admincmd's.
package fscmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/fsclient"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// DialFunc connects to the cluster (cmdutil.DialFunc).
type DialFunc = cmdutil.DialFunc

// AddFSClientCommands adds stat and lsdir to root's "fs" group (making
// the group if root has none).
func AddFSClientCommands(root *cobra.Command, out *cmdutil.Output, dial DialFunc) {
	var group *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "fs" {
			group = c
		}
	}
	if group == nil {
		group = &cobra.Command{Use: "fs", Short: "File systems"}
		root.AddCommand(group)
	}
	group.AddCommand(statCommand(out, dial), lsdirCommand(out, dial))
}

// withClient mounts file system name through the library (no FUSE), runs
// f and unmounts.
func withClient(ctx context.Context, dial DialFunc, name string, f func(*fsclient.Client) error) error {
	conn, err := dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := fsclient.Mount(ctx, conn, name, fsclient.Options{Logger: lg})
	if err != nil {
		return fmt.Errorf("mount %s: %w (cuttle fs ls lists the file systems)", name, err)
	}
	ferr := f(c)
	if err := c.Close(context.Background()); ferr == nil && err != nil {
		return err
	}
	return ferr
}

// attrBits are the names --exact takes and Approx reports.
var attrBits = []struct {
	name string
	bit  uint32
}{
	{"mode", wire.AttrMode}, {"uid", wire.AttrUID}, {"gid", wire.AttrGID}, {"size", wire.AttrSize},
	{"mtime", wire.AttrMtime}, {"atime", wire.AttrAtime}, {"ctime", wire.AttrCtime}, {"nlink", wire.AttrNlink},
}

// parseMask reads --exact: attribute names, comma-separated.
func parseMask(s string) (uint32, error) {
	var mask uint32
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		found := false
		for _, b := range attrBits {
			if b.name == n {
				mask |= b.bit
				found = true
			}
		}
		if !found {
			var names []string
			for _, b := range attrBits {
				names = append(names, b.name)
			}
			return 0, fmt.Errorf("--exact: no attribute %q (choose from %s)", n, strings.Join(names, ", "))
		}
	}
	return mask, nil
}

// approxNames lists the fields mask names.
func approxNames(mask uint32) []string {
	out := []string{}
	for _, b := range attrBits {
		if mask&b.bit != 0 {
			out = append(out, b.name)
		}
	}
	return out
}

// statRecord is one file's attributes as the commands print them.
type statRecord struct {
	Path  string    `json:"path,omitempty"`
	Name  string    `json:"name,omitempty"`
	Ino   uint64    `json:"ino"`
	Mode  string    `json:"mode"`
	Nlink uint32    `json:"nlink"`
	UID   uint32    `json:"uid"`
	GID   uint32    `json:"gid"`
	Size  uint64    `json:"size"`
	Mtime time.Time `json:"mtime"`
	Ctime time.Time `json:"ctime"`
	// Approx: the fields a statlite says may be stale.
	Approx []string `json:"approx,omitempty"`
}

func recordOf(s *fsclient.Stat) statRecord {
	return statRecord{Ino: s.Ino, Mode: s.FileMode().String(), Nlink: s.Nlink, UID: s.UID, GID: s.GID,
		Size: s.Size, Mtime: s.Mtime.UTC(), Ctime: s.Ctime.UTC()}
}

func statCommand(out *cmdutil.Output, dial DialFunc) *cobra.Command {
	var fsName, exact string
	var lite bool
	c := &cobra.Command{
		Use:   "stat PATH...",
		Short: "Show files' attributes through the client library (--lite: statlite, without revoking writers)",
		Long: `Shows the attributes of files of a file system, reached through the
client library with the cluster configuration (no mount needed). A plain
stat is exact: the MDS collects the size and mtime from clients writing
the file. With --lite it is a statlite (the POSIX HPC extension): only
the attributes named by --exact must be exact, the others come back at
once without revoking writers' caps, and those that may be stale are
listed as approximate.`,
		Example: `  cuttle fs stat /data/run1/out.0
  cuttle fs stat --lite /data/run1/out.*      # no glob: name each file
  cuttle fs stat --lite --exact size --format json /data/run1/out.0`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mask, err := parseMask(exact)
			if err != nil {
				return err
			}
			if mask != 0 && !lite {
				return fmt.Errorf("--exact applies to --lite (a plain stat is exact in every field)")
			}
			var recs []statRecord
			err = withClient(cmd.Context(), dial, fsName, func(c *fsclient.Client) error {
				for _, p := range args {
					var s *fsclient.Stat
					var err error
					if lite {
						s, err = c.Statlite(cmd.Context(), p, mask)
					} else {
						s, err = c.Stat(cmd.Context(), p)
					}
					if err != nil {
						return err
					}
					r := recordOf(s)
					r.Path = p
					if lite {
						r.Approx = approxNames(s.Approx)
					}
					recs = append(recs, r)
				}
				return nil
			})
			if err != nil {
				return err
			}
			return out.Print(recs, func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				for _, r := range recs {
					approx := ""
					if len(r.Approx) > 0 {
						approx = "  (approximate: " + strings.Join(r.Approx, ", ") + ")"
					}
					fmt.Fprintf(tw, "%s\tino %d\t%s\t%d\tsize %d\tmtime %s%s\n", r.Path, r.Ino, r.Mode, r.Nlink,
						r.Size, r.Mtime.Format(time.RFC3339Nano), approx)
				}
				return tw.Flush()
			})
		},
	}
	c.Flags().StringVar(&fsName, "fs", "cephfs", "the file system")
	c.Flags().BoolVar(&lite, "lite", false, "statlite: do not revoke writers; only --exact fields are exact")
	c.Flags().StringVar(&exact, "exact", "", "with --lite: attributes that must be exact, comma-separated (size, mtime, atime, ctime, mode, uid, gid, nlink)")
	return c
}

func lsdirCommand(out *cmdutil.Output, dial DialFunc) *cobra.Command {
	var fsName string
	var long bool
	c := &cobra.Command{
		Use:   "lsdir PATH",
		Short: "List a directory through the client library (-l: with attributes, by readdirplus)",
		Long: `Lists a directory of a file system, reached through the client library
with the cluster configuration (no mount needed). With -l each entry's
attributes come with the names (readdirplus: one MDS request per 1024
entries, none per entry). The attributes are the MDS's: a file another
client is writing may show a size behind it (cuttle fs stat is exact).
(cuttle fs ls lists the file systems themselves.)`,
		Example: `  cuttle fs lsdir /
  cuttle fs lsdir -l --format json /data/run1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var recs []statRecord
			err := withClient(cmd.Context(), dial, fsName, func(c *fsclient.Client) error {
				var ents []fsclient.DirEntry
				var err error
				if long {
					ents, err = c.ReadDirPlus(cmd.Context(), args[0])
				} else {
					ents, err = c.ReadDir(cmd.Context(), args[0])
				}
				if err != nil {
					return err
				}
				recs = make([]statRecord, 0, len(ents))
				for _, e := range ents {
					r := statRecord{Ino: e.Ino, Mode: typeOnly(e.Mode)}
					if e.Stat != nil {
						r = recordOf(e.Stat)
					}
					r.Name = e.Name
					r.Path = path.Join(args[0], e.Name)
					recs = append(recs, r)
				}
				return nil
			})
			if err != nil {
				return err
			}
			return out.Print(recs, func(w io.Writer) error {
				if !long {
					for _, r := range recs {
						fmt.Fprintln(w, r.Name)
					}
					return nil
				}
				tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
				for _, r := range recs {
					fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t %s\t %s\n", r.Mode, r.Nlink, r.UID, r.GID, r.Size,
						r.Mtime.Local().Format("Jan _2 15:04"), r.Name)
				}
				return tw.Flush()
			})
		},
	}
	c.Flags().StringVar(&fsName, "fs", "cephfs", "the file system")
	c.Flags().BoolVarP(&long, "long", "l", false, "with each entry's attributes (readdirplus)")
	return c
}

// typeOnly renders the file type bits of a st_mode as ls does.
func typeOnly(mode uint32) string {
	return (&fsclient.Stat{Mode: mode & syscall.S_IFMT}).FileMode().Type().String()[:1]
}

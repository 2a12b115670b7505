package admincmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/mds/scrub"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/spf13/cobra"
)

// fsScrubCommand is "cuttle fs scrub": the offline check of a file
// system's namespace objects (internal/mds/scrub, docs/MDS.md "Damage
// and scrub"). It reads the metadata pool directly, so it works with no
// MDS at all; because a running MDS holds changes in its cache and
// journal that the objects do not have yet, it refuses while a rank is
// held unless --force.
func fsScrubCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	var (
		path   string
		force  bool
		repair bool
	)
	c := &cobra.Command{
		Use:   "scrub [NAME]",
		Short: "Check a file system's metadata objects against each other, offline (take the file system down first: fs fail NAME); exits 1 when damage is found; --repair fixes the safe kinds",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			conn, err := cf.Dial(ctx)
			if err != nil {
				return clusterconn.Named("fs scrub", err)
			}
			defer conn.Close()
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			if repair && force {
				return fmt.Errorf("fs scrub: --repair writes the objects an MDS holding a rank would overwrite: take the file system down instead of --force (EINVAL)")
			}
			rep, err := runScrub(ctx, conn, name, path, force)
			if err != nil {
				return clusterconn.Named("fs scrub", err)
			}
			var fixed []scrub.Problem
			if repair {
				fixed, err = scrub.Repair(ctx, rep)
				if err != nil {
					return clusterconn.Named("fs scrub", err)
				}
				if len(fixed) > 0 {
					// What is left, as the objects are now.
					if rep, err = runScrub(ctx, conn, name, path, force); err != nil {
						return clusterconn.Named("fs scrub", err)
					}
				}
			}
			v := struct {
				*scrub.Report
				Repaired []scrub.Problem `json:"repaired,omitempty"`
			}{rep, fixed}
			if err := out.Print(v, func(w io.Writer) error {
				for _, p := range fixed {
					if _, err := fmt.Fprintln(w, "repaired: "+p.String()); err != nil {
						return err
					}
				}
				return printScrub(w, rep)
			}); err != nil {
				return err
			}
			if !rep.Clean() {
				return fmt.Errorf("fs scrub: %d problem(s) found, listed above with what to do (EIO)", len(rep.Problems))
			}
			return nil
		},
	}
	c.Flags().StringVar(&path, "path", "/", "scrub only the subtree at this directory (orphans and hard links are then not checked)")
	c.Flags().BoolVar(&repair, "repair", false, "fix what is safe offline: remove orphan fragment objects, set directories' link counts (then scrub again)")
	c.Flags().BoolVar(&force, "force", false, "scrub although an MDS holds a rank: changes in its cache and journal may show as false damage")
	return c
}

// scrubFS is what fs scrub needs of "fs get" and "fs ls".
type scrubFS struct {
	Name           string `json:"name"`
	MetadataPoolID int64  `json:"metadata_pool_id"`
	Ranks          []struct {
		Rank   int32 `json:"rank"`
		Holder *struct {
			Name  string `json:"name"`
			State string `json:"state"`
		} `json:"mds"`
	} `json:"ranks"`
}

// runScrub finds file system name (the only one when name is ""),
// checks that no MDS holds it unless force, and scrubs it.
func runScrub(ctx context.Context, conn *rados.Conn, name, path string, force bool) (*scrub.Report, error) {
	if name == "" {
		r, err := conn.MonCommand(ctx, "fs ls", nil)
		if err != nil {
			return nil, err
		}
		var all []scrubFS
		if err := json.Unmarshal(r.Data, &all); err != nil {
			return nil, fmt.Errorf("the monitors' fs ls reply: %w", err)
		}
		if len(all) != 1 {
			names := make([]string, len(all))
			for i, f := range all {
				names[i] = f.Name
			}
			return nil, fmt.Errorf("there are %d file systems [%s]: name the one to scrub (EINVAL)", len(all), strings.Join(names, " "))
		}
		name = all[0].Name
	}
	r, err := conn.MonCommand(ctx, "fs get", map[string]string{"fs_name": name})
	if err != nil {
		return nil, err
	}
	var fs scrubFS
	if err := json.Unmarshal(r.Data, &fs); err != nil {
		return nil, fmt.Errorf("the monitors' fs get reply: %w", err)
	}
	for _, rk := range fs.Ranks {
		if rk.Holder != nil && !force {
			return nil, fmt.Errorf("file system %s: rank %d is held by mds.%s (%s), whose cache and journal hold changes the objects do not have yet: take the file system down first (cuttle fs fail %s; afterwards cuttle fs set %s joinable true), or pass --force to scrub it live (EBUSY)",
				name, rk.Rank, rk.Holder.Name, rk.Holder.State, name, name)
		}
	}
	poolName, err := conn.PoolName(fs.MetadataPoolID)
	if err != nil {
		return nil, fmt.Errorf("file system %s: metadata pool %d: %w", name, fs.MetadataPoolID, err)
	}
	meta, err := conn.OpenIOContext(poolName)
	if err != nil {
		return nil, fmt.Errorf("file system %s: metadata pool %s: %w", name, poolName, err)
	}
	return scrub.Run(ctx, scrub.Config{Conn: conn, Meta: meta, Path: path})
}

// printScrub prints one line a problem, then the summary.
func printScrub(w io.Writer, rep *scrub.Report) error {
	for _, p := range rep.Problems {
		if _, err := fmt.Fprintln(w, p.String()); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, rep.Summary())
	return err
}

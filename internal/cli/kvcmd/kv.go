package kvcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// DialFunc connects to the cluster (cmdutil.DialFunc).
type DialFunc = cmdutil.DialFunc

// env is what every `cuttle kv` command shares.
type env struct {
	out  *cmdutil.Output
	dial DialFunc
}

// AddKVCommands adds "cuttle kv", which connects with dial.
func AddKVCommands(root *cobra.Command, out *cmdutil.Output, dial DialFunc) {
	e := &env{out: out, dial: dial}
	c := &cobra.Command{
		Use:   "kv COMMAND ...",
		Short: "Create, read, write, list and check key-value stores (B-trees on object maps)",
		Long: `Key-value store commands. A store is named "POOL/NAME": the index
object kv.NAME.index and its leaves in pool POOL. docs/KV.md describes the
store, its limits and its objects.`,
	}
	c.AddCommand(createCommand(e), putCommand(e), getCommand(e), rmCommand(e), lsCommand(e), infoCommand(e), checkCommand(e), benchCommand(e))
	root.AddCommand(c)
}

// parseSpec parses "POOL/NAME".
func parseSpec(arg string) (pool, name string, err error) {
	pool, name, ok := strings.Cut(arg, "/")
	if !ok || pool == "" || name == "" {
		return "", "", fmt.Errorf("bad store %q: want POOL/NAME (EINVAL)", arg)
	}
	return pool, name, nil
}

// withIO connects and runs f on pool's I/O context.
func (e *env) withIO(cmd *cobra.Command, pool string, f func(ctx context.Context, io *rados.IOContext) error) error {
	conn, err := e.dial(cmd.Context())
	if err != nil {
		return err
	}
	defer conn.Close()
	ioc, err := conn.OpenIOContext(pool)
	if err != nil {
		return kvFailure(err)
	}
	return kvFailure(f(cmd.Context(), ioc))
}

// withStore connects and opens the store spec names.
func (e *env) withStore(cmd *cobra.Command, spec string, f func(ctx context.Context, s *kv.Store) error) error {
	pool, name, err := parseSpec(spec)
	if err != nil {
		return err
	}
	return e.withIO(cmd, pool, func(ctx context.Context, ioc *rados.IOContext) error {
		s, err := kv.Open(ctx, ioc, name, kv.Config{})
		if err != nil {
			return err
		}
		defer s.Close(context.WithoutCancel(ctx))
		return f(ctx, s)
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

// kvFailure is the one place the CLI rewords the library's errors: each
// class ends with its errno's name, and says what to do where there is
// something to do.
func kvFailure(err error) error {
	if err == nil {
		return nil
	}
	var cli *cliError
	if errors.As(err, &cli) {
		return err
	}
	msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "kv: "), ": kv: ", ": ")
	for _, m := range []struct {
		err  error
		tail string
	}{
		{rados.ErrPoolNotFound, " (ENOENT); cuttle osd pool ls lists the pools"},
		{kv.ErrNotFound, " (ENOENT)"},
		{kv.ErrExists, " (EEXIST)"},
		{kv.ErrInvalid, " (EINVAL)"},
		{kv.ErrCorrupt, " (EIO); cuttle kv check POOL/NAME lists what is wrong"},
		{kv.ErrBusy, " (EBUSY); another client's operation holds the leaf: try again"},
	} {
		if errors.Is(err, m.err) {
			return &cliError{msg + m.tail, err}
		}
	}
	return &cliError{msg, err}
}

type storeReport struct {
	Pool  string `json:"pool"`
	Store string `json:"store"`
	K     uint32 `json:"k,omitempty"`
}

func createCommand(e *env) *cobra.Command {
	var k uint32
	c := &cobra.Command{
		Use:   "create POOL/NAME [--k K]",
		Short: "Create an empty store (each leaf holds k to 2k entries)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pool, name, err := parseSpec(args[0])
			if err != nil {
				return err
			}
			return e.withIO(cmd, pool, func(ctx context.Context, ioc *rados.IOContext) error {
				s, err := kv.Create(ctx, ioc, name, kv.Options{K: k}, kv.Config{})
				if err != nil {
					return err
				}
				r := storeReport{Pool: pool, Store: name, K: s.K()}
				return e.out.Print(r, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "created store %s/%s (k %d)\n", pool, name, r.K)
					return err
				})
			})
		},
	}
	c.Flags().Uint32Var(&k, "k", 400, "a leaf holds at most 2k entries and, once there are several, at least k")
	return c
}

type pairReport struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func putCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "put POOL/NAME KEY VALUE",
		Short: "Set a key's value",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withStore(cmd, args[0], func(ctx context.Context, s *kv.Store) error {
				if err := s.Put(ctx, args[1], []byte(args[2])); err != nil {
					return err
				}
				return e.out.Print(pairReport{Key: args[1], Value: args[2]}, func(io.Writer) error { return nil })
			})
		},
	}
}

func getCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "get POOL/NAME KEY",
		Short: "Print a key's value",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withStore(cmd, args[0], func(ctx context.Context, s *kv.Store) error {
				v, err := s.Get(ctx, args[1])
				if err != nil {
					return err
				}
				return e.out.Print(pairReport{Key: args[1], Value: string(v)}, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "%s\n", v)
					return err
				})
			})
		},
	}
}

func rmCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rm POOL/NAME KEY",
		Short: "Remove a key (a missing key is not an error)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withStore(cmd, args[0], func(ctx context.Context, s *kv.Store) error {
				if err := s.Remove(ctx, args[1]); err != nil {
					return err
				}
				return e.out.Print(struct {
					Key string `json:"key"`
				}{args[1]}, func(io.Writer) error { return nil })
			})
		},
	}
}

// prefixEnd is the first string after every string with prefix p ("":
// none).
func prefixEnd(p string) string {
	b := []byte(p)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return ""
	}
	b[len(b)-1]++
	return string(b)
}

type lsReport struct {
	Pairs []pairReport `json:"pairs"`
	More  bool         `json:"more"`
	// Next is the --start of the next page when More.
	Next string `json:"next,omitempty"`
}

func lsCommand(e *env) *cobra.Command {
	var prefix, start string
	var limit int
	var values bool
	c := &cobra.Command{
		Use:   "ls POOL/NAME [--prefix P] [--start KEY] [--limit N] [--values]",
		Short: "List keys in order (from --start, with --prefix), up to --limit",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 {
				return fmt.Errorf("--limit %d: want at least 1 (EINVAL)", limit)
			}
			end := ""
			if prefix != "" {
				start = max(start, prefix)
				end = prefixEnd(prefix)
			}
			return e.withStore(cmd, args[0], func(ctx context.Context, s *kv.Store) error {
				pairs, more, err := s.List(ctx, start, end, limit)
				if err != nil {
					return err
				}
				r := lsReport{Pairs: []pairReport{}, More: more}
				for _, p := range pairs {
					r.Pairs = append(r.Pairs, pairReport{Key: p.Key, Value: string(p.Value)})
				}
				if more {
					r.Next = pairs[len(pairs)-1].Key + "\x00"
				}
				return e.out.Print(r, func(w io.Writer) error {
					for _, p := range r.Pairs {
						line := p.Key
						if values {
							line += "\t" + p.Value
						}
						if _, err := fmt.Fprintln(w, line); err != nil {
							return err
						}
					}
					if more {
						_, err := fmt.Fprintf(w, "(more: --start %q)\n", r.Next)
						return err
					}
					return nil
				})
			})
		},
	}
	c.Flags().StringVar(&prefix, "prefix", "", "only keys with this prefix")
	c.Flags().StringVar(&start, "start", "", "the first key to list (the next of a page: the last key + \"\\x00\", as --format json's next gives)")
	c.Flags().IntVar(&limit, "limit", 1000, "list at most this many keys")
	c.Flags().BoolVar(&values, "values", false, "print each key's value after a tab")
	return c
}

type infoReport struct {
	Pool     string `json:"pool"`
	Store    string `json:"store"`
	K        uint32 `json:"k"`
	Depth    int    `json:"depth"`
	Leaves   int    `json:"leaves"`
	Entries  uint64 `json:"entries"`
	MinLeaf  uint64 `json:"min_leaf_entries"`
	MaxLeaf  uint64 `json:"max_leaf_entries"`
	Pending  int    `json:"pending_operations"`
	IndexObj string `json:"index_object"`
}

func infoCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "info POOL/NAME",
		Short: "Show a store's k, depth, leaves and entries",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pool, name, err := parseSpec(args[0])
			if err != nil {
				return err
			}
			return e.withStore(cmd, args[0], func(ctx context.Context, s *kv.Store) error {
				st, err := s.Stat(ctx)
				if err != nil {
					return err
				}
				r := infoReport{Pool: pool, Store: name, K: st.K, Depth: st.Depth, Leaves: st.Leaves, Entries: st.Entries,
					Pending: st.Pending, IndexObj: "kv." + name + ".index"}
				for i, n := range st.Counts {
					if i == 0 || n < r.MinLeaf {
						r.MinLeaf = n
					}
					r.MaxLeaf = max(r.MaxLeaf, n)
				}
				return e.out.Print(r, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "store %s/%s:\n\tk: %d\n\tdepth: %d\n\tleaves: %d\n\tentries: %d\n\tentries per leaf: %d to %d\n\tpending operations: %d\n\tindex object: %s\n",
						pool, name, r.K, r.Depth, r.Leaves, r.Entries, r.MinLeaf, r.MaxLeaf, r.Pending, r.IndexObj)
					return err
				})
			})
		},
	}
}

type problemReport struct {
	Object string `json:"object"`
	What   string `json:"problem"`
}

type checkReport struct {
	Pool     string          `json:"pool"`
	Store    string          `json:"store"`
	Entries  uint64          `json:"entries"`
	Problems []problemReport `json:"problems"`
	// Repair: what --repair's sweep did (absent without --repair).
	Repair *repairReport `json:"repair,omitempty"`
}

type sweptReport struct {
	Leaf       string  `json:"leaf"`
	AgeSeconds float64 `json:"age_seconds"`
	FrozenBy   string  `json:"frozen_by,omitempty"`
}

type repairReport struct {
	OlderThanSeconds float64       `json:"older_than_seconds"`
	LeafObjects      int           `json:"leaf_objects"`
	Removed          []sweptReport `json:"removed"`
	Young            []sweptReport `json:"young"`
}

func sweptReports(in []kv.Swept) []sweptReport {
	out := []sweptReport{}
	for _, o := range in {
		out = append(out, sweptReport{Leaf: o.Leaf, AgeSeconds: o.Age.Seconds(), FrozenBy: o.Frozen})
	}
	return out
}

func checkCommand(e *env) *cobra.Command {
	var repair bool
	var olderThan time.Duration
	c := &cobra.Command{
		Use:   "check POOL/NAME",
		Short: "Verify a store: leaf bounds against the index, counts, k to 2k, no leftover marks or freezes; --repair removes orphan leaves",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pool, name, err := parseSpec(args[0])
			if err != nil {
				return err
			}
			if olderThan < 0 {
				return &cliError{fmt.Sprintf("--older-than %v is negative (EINVAL); give an age such as 5s", olderThan), kv.ErrInvalid}
			}
			return e.withStore(cmd, args[0], func(ctx context.Context, s *kv.Store) error {
				r := checkReport{Pool: pool, Store: name, Problems: []problemReport{}}
				if repair {
					sw, err := s.Sweep(ctx, olderThan)
					if err != nil {
						return err
					}
					r.Repair = &repairReport{OlderThanSeconds: sw.OlderThan.Seconds(), LeafObjects: sw.Leaves, Removed: sweptReports(sw.Removed), Young: sweptReports(sw.Young)}
				}
				problems, n, err := s.Check(ctx)
				if err != nil {
					return err
				}
				r.Entries = n
				for _, p := range problems {
					r.Problems = append(r.Problems, problemReport{Object: p.Object, What: p.What})
				}
				if err := e.out.Print(r, func(w io.Writer) error {
					if rp := r.Repair; rp != nil {
						for _, o := range rp.Removed {
							what := "never named by the index (its operation was rolled back)"
							if o.FrozenBy != "" {
								what = "swapped out by " + o.FrozenBy
							}
							if _, err := fmt.Fprintf(w, "removed %s: orphan leaf, %s, %.0fs old\n", o.Leaf, what, o.AgeSeconds); err != nil {
								return err
							}
						}
						if _, err := fmt.Fprintf(w, "repair: %d leaf objects, %d orphans removed, %d orphans younger than %v left\n", rp.LeafObjects, len(rp.Removed), len(rp.Young), time.Duration(rp.OlderThanSeconds*float64(time.Second)).Round(time.Millisecond)); err != nil {
							return err
						}
					}
					for _, p := range r.Problems {
						if _, err := fmt.Fprintf(w, "%s: %s\n", p.Object, p.What); err != nil {
							return err
						}
					}
					_, err := fmt.Fprintf(w, "store %s/%s: %d entries, %d problems\n", pool, name, n, len(r.Problems))
					return err
				}); err != nil {
					return err
				}
				if len(problems) > 0 {
					return &cliError{fmt.Sprintf("store %s/%s has %d problems (EIO); a mark or freeze alone may be an operation under way: check again", pool, name, len(problems)), kv.ErrCorrupt}
				}
				return nil
			})
		},
	}
	c.Flags().BoolVar(&repair, "repair", false, "first remove orphan leaves: leaf objects of the store that neither the index nor a pending operation names, older than --older-than")
	c.Flags().DurationVar(&olderThan, "older-than", 0, "with --repair, remove only orphans whose object is at least this old (default: the store's mark timeout, 5s)")
	return c
}

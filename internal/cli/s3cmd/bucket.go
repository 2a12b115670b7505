package s3cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/s3gw"
)

func bucketCommand(e *env) *cobra.Command {
	c := &cobra.Command{Use: "bucket COMMAND ...", Short: "Check buckets' indexes against their data"}
	c.AddCommand(bucketCheckCommand(e))
	return c
}

func bucketCheckCommand(e *env) *cobra.Command {
	var (
		o          s3gw.CheckOptions
		noLeaks    bool
		noProgress bool
	)
	c := &cobra.Command{
		Use:   "check BUCKET... | --all [--fix [--remove-broken]] [--min-idle 1h]",
		Short: "Check that buckets' index entries and data agree, and fix what can be fixed",
		Long: `Walk the buckets' indexes (every version) and stat the data objects each
entry names; list the pool's data objects and find those that no entry,
no part of an upload in progress and no garbage record names (data ids
name no bucket, so this scan covers the whole pool and reads every
bucket's index, whichever are checked: --no-leaks skips it); and find
garbage records whose data are still in use. Data written or records
made within --min-idle (the collector's hour by default) are writes in
flight and not counted.

--fix puts leaked data on the garbage list, dated when they were last
written (a serving gateway or cuttle s3 gc then removes them; data are
never removed here), and drops the garbage records that name live data. Entries whose
data are missing or short are only reported: --fix --remove-broken
removes them (their remaining data go on the garbage list), as
radosgw-admin bucket check --fix does. Index keys that do not decode are
reported, never removed. The command exits non-zero while problems
remain. A progress line is drawn on a terminal's stderr.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !o.All {
				return &cliError{msg: "name the buckets to check, or --all (EINVAL)"}
			}
			if len(args) > 0 && o.All {
				return &cliError{msg: "name buckets or give --all, not both (EINVAL)"}
			}
			if o.RemoveBroken && !o.Fix {
				return &cliError{msg: "--remove-broken removes entries only with --fix: give both (EINVAL)"}
			}
			o.Buckets, o.Leaks = args, !noLeaks
			conn, ioctx, err := e.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer conn.Close()
			gw, err := s3gw.New(s3gw.Config{IO: ioctx, KV: kvConfig()})
			if err != nil {
				return err
			}
			done := func() {}
			if !noProgress {
				o.Progress, done = progressLine(cmd.ErrOrStderr())
			}
			r, err := gw.CheckBuckets(cmd.Context(), o)
			done()
			if err != nil {
				return failure(err)
			}
			if err := e.out.Print(r, func(w io.Writer) error { return printCheck(w, r) }); err != nil {
				return err
			}
			if n := r.Remaining(); n > 0 {
				return &cliError{msg: fmt.Sprintf("s3 bucket check: %d problem(s) remain, listed above (EUCLEAN)", n)}
			}
			return nil
		},
	}
	f := c.Flags()
	f.BoolVar(&o.All, "all", false, "check every bucket")
	f.BoolVar(&o.Fix, "fix", false, "record leaked data as garbage and drop garbage records that name live data")
	f.BoolVar(&o.RemoveBroken, "remove-broken", false, "with --fix, remove the entries whose data are missing or short")
	f.BoolVar(&noLeaks, "no-leaks", false, "skip the scan of the pool for leaked data")
	f.DurationVar(&o.MinIdle, "min-idle", s3gw.DefaultGarbageAge, "data and records younger than this are writes in flight, not problems (0 only when no gateway writes)")
	f.IntVar(&o.Examples, "examples", 10, "examples printed of each kind of problem")
	f.BoolVar(&noProgress, "no-progress", false, "draw no progress line")
	return c
}

// progressLine returns a CheckOptions.Progress drawing one line on w
// when w is a terminal (else nil), and what clears it at the end.
func progressLine(w io.Writer) (func(s3gw.CheckProgress), func()) {
	f, ok := w.(*os.File)
	if !ok {
		return nil, func() {}
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil, func() {}
	}
	width := 0
	draw := func(p s3gw.CheckProgress) {
		var s string
		switch p.Phase {
		case "pool":
			s = fmt.Sprintf("listing the pool: %d objects", p.Done)
		case "index":
			s = fmt.Sprintf("index of %s: %d entries", p.Bucket, p.Done)
		case "leaks":
			s = fmt.Sprintf("looking at %d unnamed data objects", p.Done)
		default:
			s = fmt.Sprintf("%s: %d", p.Phase, p.Done)
		}
		fmt.Fprintf(f, "\r%-*s", width, s)
		width = max(width, len(s))
	}
	return draw, func() {
		if width > 0 {
			fmt.Fprintf(f, "\r%s\r", strings.Repeat(" ", width))
		}
	}
}

// printCheck prints a check's report, with what to do about each kind.
func printCheck(w io.Writer, r s3gw.CheckReport) error {
	fmt.Fprintf(w, "checked %d bucket(s) (%s): %d index entries, %d upload(s) of %d part(s), %d data objects; ", len(r.Buckets), strings.Join(r.Buckets, ", "), r.Entries, r.Uploads, r.Parts, r.DataObjects)
	if r.LeaksChecked {
		fmt.Fprintf(w, "the pool holds %d data objects and %d garbage records\n", r.PoolDataObjects, r.GarbageRecords)
	} else {
		fmt.Fprintf(w, "%d garbage records; leaks not looked for (--no-leaks)\n", r.GarbageRecords)
	}
	kinds := []struct {
		name    string
		f       s3gw.Finding
		todo    string
		fixWord string
		kept    string // why a fix left them
	}{
		{"entries with missing or short data", r.Missing,
			"the objects cannot be read whole: restore their data, or delete them through S3, or run again with --fix --remove-broken to remove these entries (their remaining data go on the garbage list)", "entry removed", ""},
		{"parts of uploads in progress with missing or short data", r.BrokenParts,
			"completing the upload would make an object that cannot be read: upload those parts again, or abort the upload", "", ""},
		{"leaked data ids", r.Leaked,
			"run again with --fix: they go on the garbage list, and cuttle s3 gc (or a serving gateway, within 10 minutes) removes them", "on the garbage list", r.LeaksKept},
		{"garbage records naming live data", r.LiveGarbage,
			"a collection would keep the data and drop these records; run again with --fix to drop them now", "record dropped", ""},
		{"index keys that do not decode", r.Undecodable,
			"an entry written by a newer Cuttle reads with that version; else remove the key from the bucket's index (the kv store named in the detail) with cuttle kv rm POOL/STORE KEY; its data will then show as leaked", "", ""},
	}
	for _, k := range kinds {
		if k.f.Count == 0 {
			continue
		}
		fmt.Fprintf(w, "%s: %d", k.name, k.f.Count)
		if k.f.Fixed > 0 {
			fmt.Fprintf(w, " (%d fixed)", k.f.Fixed)
		}
		fmt.Fprintln(w)
		for _, p := range k.f.Examples {
			fmt.Fprintf(w, "  %s", problemName(p))
			fmt.Fprintf(w, ": %s", p.Detail)
			if p.Fixed {
				fmt.Fprintf(w, " [fixed: %s]", k.fixWord)
			}
			fmt.Fprintln(w)
		}
		if more := k.f.Count - len(k.f.Examples); more > 0 {
			fmt.Fprintf(w, "  ... and %d more (--examples N shows more)\n", more)
		}
		if k.kept != "" {
			fmt.Fprintf(w, "  not fixed: %s\n", k.kept)
		}
		if k.f.Fixed < k.f.Count {
			fmt.Fprintf(w, "  to do: %s\n", k.todo)
		}
	}
	if r.InFlight > 0 {
		fmt.Fprintf(w, "%d data id(s) named by nothing were written within %s: writes in flight, not counted\n", r.InFlight, time.Duration(r.MinIdle*float64(time.Second)))
	}
	found := r.Missing.Count + r.BrokenParts.Count + r.Leaked.Count + r.LiveGarbage.Count + r.Undecodable.Count
	switch n := r.Remaining(); {
	case found == 0:
		fmt.Fprintln(w, "clean")
	case n == 0:
		fmt.Fprintf(w, "%d problem(s) fixed, none remain\n", found)
	default:
		fmt.Fprintf(w, "%d problem(s) remain\n", n)
	}
	return nil
}

// problemName names a problem's object, version, upload or data.
func problemName(p s3gw.CheckProblem) string {
	var s []string
	if p.Bucket != "" || p.Key != "" {
		s = append(s, p.Bucket+"/"+p.Key)
	}
	if p.Version != "" {
		s = append(s, "version "+p.Version)
	}
	if p.Upload != "" {
		s = append(s, "upload "+p.Upload)
	}
	if p.Data != "" {
		s = append(s, "data "+p.Data)
	}
	return strings.Join(s, " ")
}

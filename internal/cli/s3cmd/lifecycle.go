package s3cmd

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/s3gw"
)

func lifecycleCommand(e *env) *cobra.Command {
	c := &cobra.Command{Use: "lifecycle COMMAND ...", Short: "Run buckets' lifecycle rules"}
	c.AddCommand(lifecycleRunCommand(e))
	return c
}

func lifecycleRunCommand(e *env) *cobra.Command {
	given := map[string]string{}
	c := &cobra.Command{
		Use:   "run [BUCKET...]",
		Short: "Run a lifecycle pass now over the buckets named, or every bucket with enabled rules",
		Long: `Run the lifecycle rules of the buckets named (default: every bucket with
an enabled rule) now, whether or not their pass of the day is done:
expire current versions (a delete marker in a versioned bucket), remove
noncurrent versions and expired object delete markers, abort stale
multipart uploads. A bucket whose pass a serving gateway holds is left
to it (busy); a pass another gateway left half done is resumed.
--lifecycle-day must match the serving gateways' (s3_lifecycle_day in
the configuration file is read as serve reads it).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := gatewayOptions(cmd, given)
			if err != nil {
				return err
			}
			conn, ioctx, err := e.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer conn.Close()
			gw, err := s3gw.New(s3gw.Config{IO: ioctx, KV: kvConfig(),
				Lifecycle: s3gw.LifecycleConfig{Day: opts.Duration("s3_lifecycle_day"), MaxOps: opts.Float("s3_lifecycle_max_ops")}})
			if err != nil {
				return err
			}
			res, err := gw.RunLifecycle(cmd.Context(), args, true)
			gw.Quiesce()
			if err != nil && len(res.Buckets) == 0 {
				return failure(err)
			}
			if perr := e.out.Print(res, func(w io.Writer) error { return printLifecycle(w, res) }); perr != nil {
				return perr
			}
			if err != nil {
				return &cliError{msg: fmt.Sprintf("s3 lifecycle run: %v (EIO); the next pass tries again", err), err: err}
			}
			return nil
		},
	}
	addOptionFlags(c.Flags(), given, "s3_lifecycle_")
	return c
}

func printLifecycle(w io.Writer, r s3gw.LifecycleResult) error {
	if len(r.Buckets) == 0 {
		_, err := fmt.Fprintln(w, "no bucket has an enabled lifecycle rule")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUCKET\tOUTCOME\tEXPIRED\tNONCURRENT\tDELETE MARKERS\tABORTED UPLOADS")
	for _, b := range r.Buckets {
		out := b.Outcome
		if b.Error != "" {
			out += ": " + b.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", b.Bucket, out, b.Expired, b.Noncurrent, b.DeleteMarkers, b.Aborted)
	}
	return tw.Flush()
}

package admincmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/spf13/cobra"
)

// AddTellCommand adds `cuttle tell osd.N COMMAND`: admin commands to one
// OSD (status, dump_ops_in_flight, dump_pgs, dump_objectstore_kv_stats,
// dump_recovery_reservations, config show), as Ceph's `ceph tell`. A command of several words may be
// given as several arguments (tell osd.0 config show).
func AddTellCommand(root *cobra.Command, out *cmdutil.Output, f *clusterconn.Flags) {
	root.AddCommand(&cobra.Command{
		Use:   "tell osd.N status|dump_ops_in_flight|dump_pgs|dump_objectstore_kv_stats|dump_recovery_reservations|config show",
		Short: "Send an admin command to one OSD",
		Long: `Send an admin command to one OSD and print its answer:

  status              the OSD's address, map epoch, PGs by state, ops in flight
  dump_ops_in_flight  client ops it has not answered yet, oldest first, with
                      what each waits for (map, min_size, replicas)
  dump_pgs            every PG it holds: state, role, acting set, last
                      update, objects and bytes
  dump_objectstore_kv_stats
                      the object store's metadata database (Pebble): tables
                      and bytes per level, what its log, flushes and
                      compactions wrote and read since the OSD started
  dump_recovery_reservations
                      recovery's slots: the PGs this OSD recovers as
                      primary or queues (local), the primaries pushing to
                      it or queued (remote), the most held at once
  config show         every option the OSD reads: the value in effect, where
                      it came from (default, mon, file, cmdline) and its
                      default

The entity needs osd caps of '*' (client.admin has them).`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, ok := strings.CutPrefix(args[0], "osd.")
			n, err := strconv.ParseInt(id, 10, 32)
			if !ok || err != nil || n < 0 {
				return fmt.Errorf("tell: %q is not an OSD (want osd.N)", args[0])
			}
			err = sendDaemonCommand(cmd, f, out, func(ctx context.Context, c *rados.Conn) (rados.MonReply, error) {
				return c.OSDCommand(ctx, int32(n), strings.Join(args[1:], " "))
			})
			if ue := (*rados.OSDUnavailableError)(nil); errors.As(err, &ue) {
				return clusterconn.Shown("tell: "+ue.Reason(), err)
			}
			return err
		},
	})
}

// sendDaemonCommand connects to the cluster, sends one daemon command
// with send, bounded by the command timeout, and prints the answer.
func sendDaemonCommand(cmd *cobra.Command, cf *clusterconn.Flags, out *cmdutil.Output, send func(context.Context, *rados.Conn) (rados.MonReply, error)) error {
	conn, err := cf.Dial(cmd.Context())
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), cf.Timeout)
	defer cancel()
	r, err := send(ctx, conn)
	if err != nil {
		return err
	}
	return clusterconn.PrintReply(out, wire.Reply{Status: r.Status, Data: r.Data, Text: r.Text})
}

package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/spf13/cobra"
)

// addTellCommand adds `cuttle tell osd.N COMMAND`: admin commands to one
// OSD (status, dump_ops_in_flight, dump_pgs), as Ceph's `ceph tell`.
func addTellCommand(root *cobra.Command, out *Output, f *clusterFlags) {
	root.AddCommand(&cobra.Command{
		Use:   "tell osd.N status|dump_ops_in_flight|dump_pgs",
		Short: "Send an admin command to one OSD",
		Long: `Send an admin command to one OSD and print its answer:

  status              the OSD's address, map epoch, PGs by state, ops in flight
  dump_ops_in_flight  client ops it has not answered yet, oldest first, with
                      what each waits for (map, min_size, replicas)
  dump_pgs            every PG it holds: state, role, acting set, last
                      update, objects and bytes

The entity needs osd caps of '*' (client.admin has them).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, ok := strings.CutPrefix(args[0], "osd.")
			n, err := strconv.ParseInt(id, 10, 32)
			if !ok || err != nil || n < 0 {
				return fmt.Errorf("tell: %q is not an OSD (want osd.N)", args[0])
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
			defer cancel()
			conn, err := f.radosConn(ctx)
			if err != nil {
				return err
			}
			defer conn.Close()
			r, err := conn.OSDCommand(ctx, int32(n), args[1])
			if err != nil {
				return err
			}
			return printReply(out, wire.Reply{Status: r.Status, Data: r.Data, Text: r.Text})
		},
	})
}

// radosConn connects the client library as the flags and configuration
// file say.
func (f *clusterFlags) radosConn(ctx context.Context) (*rados.Conn, error) {
	var cfg rados.Config
	if f.conf != "" {
		c, err := rados.LoadConfig(f.conf, f.name)
		if err != nil && f.monHost == "" {
			return nil, fmt.Errorf("no monitors: give --mon-host, or --conf (or $CUTTLE_CONF) with mon_host, or start a local cluster with cuttle cluster up (%w)", err)
		}
		if err == nil {
			cfg = c
		}
	}
	cfg.Name = f.name
	if f.monHost != "" {
		cfg.Mons = strings.Split(f.monHost, ",")
	}
	if f.keyring != "" {
		cfg.Keyring = f.keyring
	}
	return rados.Connect(ctx, cfg)
}

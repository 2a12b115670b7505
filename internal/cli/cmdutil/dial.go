package cmdutil

import (
	"context"

	"github.com/cuttlestore/cuttle/rados"
)

// DialFunc connects a command to the cluster; the command closes the
// connection it gets. The root command dials from --conf and the
// identity flags; tests dial a simulated cluster.
type DialFunc func(ctx context.Context) (*rados.Conn, error)

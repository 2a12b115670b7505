package cmdutil

import (
	"context"

	"github.com/cuttlestore/cuttle/rados"
)

// DialFunc connects a command to the cluster; the command closes the
// connection it gets. The root command dials from --conf and the
// identity flags; tests dial a simulated cluster.
type DialFunc func(ctx context.Context) (*rados.Conn, error)

// readPolicyKey carries a command's read policy to the DialFunc.
type readPolicyKey struct{}

// WithReadPolicy returns ctx telling the DialFunc to connect with client
// read policy policy (rados.Config.ReadPolicy: cuttle bench
// --read-policy).
func WithReadPolicy(ctx context.Context, policy string) context.Context {
	return context.WithValue(ctx, readPolicyKey{}, policy)
}

// ReadPolicy returns the read policy WithReadPolicy put in ctx, if any.
func ReadPolicy(ctx context.Context) (string, bool) {
	p, ok := ctx.Value(readPolicyKey{}).(string)
	return p, ok
}

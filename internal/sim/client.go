package sim

import (
	"context"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// Client connects a rados client called name to the cluster (over memnet,
// or TCP with Options.TCP; as client.admin with Options.Cephx) and closes
// it when the test ends. Packages above rados test against the cluster
// through it.
func (c *Cluster) Client(name string) *rados.Conn {
	c.t.Helper()
	var mons []string
	for _, mi := range c.monmap.Mons {
		mons = append(mons, mi.Name+"="+mi.Addr)
	}
	cfg := rados.Config{Mons: mons, Name: name, Auth: "none", Network: c.network(name), Logger: Logger(name), Seed: 11}
	if c.opts.Cephx {
		cfg.Name, cfg.Auth, cfg.Key = adminName.String(), "cephx", c.keyring[adminName].Key.Base64()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := rados.Connect(ctx, cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { conn.Close() })
	return conn
}

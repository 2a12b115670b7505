package sim

import "github.com/cuttlestore/cuttle/internal/monc"

// MonAddrs returns the monitors' addresses, for daemons a test assembles
// itself (an MDS through internal/daemon).
func (c *Cluster) MonAddrs() []monc.Addr {
	var out []monc.Addr
	for _, mi := range c.monmap.Mons {
		out = append(out, monc.Addr{Name: mi.Name, Addr: mi.Addr})
	}
	return out
}

package rados

import "fmt"

// Instance names this Conn to the cluster: its entity and its
// incarnation (random per Conn), "client.admin/5f3a…" — what every
// operation it sends carries (wire.ReqID). Two processes with one entity
// name have different instances. A client that takes a lock records its
// instance, so that another that finds it dead can fence that one
// process (osd blocklist add INSTANCE) and no other.
func (c *Conn) Instance() string {
	return fmt.Sprintf("%s/%x", c.obj.client, c.obj.incarnation)
}

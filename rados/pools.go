package rados

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cuttlestore/cuttle/osdmap"
)

// PoolOptions are the settings of a new pool; zero fields take the
// monitors' defaults (osd_pool_default_pg_num, _size, _min_size).
type PoolOptions struct {
	PGNum   uint32
	Size    int
	MinSize int
	// Rule names the CRUSH rule (default: the monitors').
	Rule string
	// FewCopies confirms a size of 1 or a MinSize below a majority of
	// Size, which the monitors refuse otherwise (yes_i_really_mean_it).
	FewCopies bool
}

// LookupPool returns the id of the named pool in the client's map.
func (c *Conn) LookupPool(name string) (int64, error) {
	p := c.obj.currentMap().PoolByName(name)
	if p == nil {
		return 0, fmt.Errorf("%w: %q", ErrPoolNotFound, name)
	}
	return p.ID, nil
}

// PoolName returns the name of the pool with id.
func (c *Conn) PoolName(id int64) (string, error) {
	p := c.obj.currentMap().Pool(id)
	if p == nil {
		return "", fmt.Errorf("%w: id %d", ErrPoolNotFound, id)
	}
	return p.Name, nil
}

// ListPools returns the pools' names, in id order.
func (c *Conn) ListPools() []string {
	pools := c.obj.currentMap().Pools()
	names := make([]string, len(pools))
	for i := range pools {
		names[i] = pools[i].Name
	}
	return names
}

// CreatePool creates a replicated pool ("osd pool create") and waits
// until the client's map has it, so that OpenIOContext finds it. It is
// ErrExists if the pool exists with other settings; creating a pool that
// exists with the same settings succeeds.
func (c *Conn) CreatePool(ctx context.Context, name string, opts *PoolOptions) error {
	args := map[string]string{"pool": name}
	if opts != nil {
		setCount(args, "pg_num", int64(opts.PGNum))
		setCount(args, "pgp_num", int64(opts.PGNum))
		setCount(args, "size", int64(opts.Size))
		setCount(args, "min_size", int64(opts.MinSize))
		if opts.Rule != "" {
			args["rule"] = opts.Rule
		}
		if opts.FewCopies {
			args["yes_i_really_mean_it"] = "true"
		}
	}
	if _, err := c.MonCommand(ctx, "osd pool create", args); err != nil {
		return err
	}
	return c.waitPool(ctx, name, true)
}

// DeletePool deletes the named pool and all its objects ("osd pool rm";
// the monitors must allow it: mon_allow_pool_delete) and waits until the
// client's map no longer has it.
func (c *Conn) DeletePool(ctx context.Context, name string) error {
	if _, err := c.LookupPool(name); err != nil {
		return err
	}
	_, err := c.MonCommand(ctx, "osd pool rm", map[string]string{"pool": name, "pool2": name, "yes_i_really_really_mean_it": "true"})
	if err != nil {
		return err
	}
	return c.waitPool(ctx, name, false)
}

// waitPool waits until the pool exists in the client's map (or not).
func (c *Conn) waitPool(ctx context.Context, name string, exists bool) error {
	c.requestMap(c.Epoch() + 1)
	return c.obj.waitMap(ctx, func(m *osdmap.Map) bool { return (m.PoolByName(name) != nil) == exists })
}

func setCount(args map[string]string, name string, v int64) {
	if v > 0 {
		args[name] = strconv.FormatInt(v, 10)
	}
}

// PoolFull reports whether the client's current OSD map marks pool id
// full (an OSD it can place data on is full): writes that add data to it
// are refused with ErrNoSpace. A metadata server asks before it journals
// a space-taking operation, as Ceph's does. An unknown pool is not full.
func (c *Conn) PoolFull(id int64) bool {
	p := c.obj.currentMap().Pool(id)
	return p != nil && p.Flags&osdmap.PoolFull != 0
}

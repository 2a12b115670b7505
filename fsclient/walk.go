package fsclient

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Path walking on the client, as a kernel does: one component at a
// time from the mount's root (every path is taken from there; there is
// no working directory), "." staying and ".." going up (not above the
// root), symlinks followed (at most maxSymlinks in one walk: ELOOP),
// names served from the dentry cache while their lease lasts.

// maxSymlinks is Linux's limit of symlinks followed in one lookup.
const maxSymlinks = 40

// maxName is the longest name a component may have (NAME_MAX).
const maxName = 255

// split returns the components of p.
func split(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// walk resolves p to an inode; follow says whether a symlink as the
// last component is followed.
func (c *Client) walk(ctx context.Context, p string, follow bool) (uint64, wire.InodeStat, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return 0, wire.InodeStat{}, syscall.EINVAL
	}
	stack := []uint64{c.rootIno}
	todo := split(p)
	links := 0
	cur, err := c.getattr(ctx, c.rootIno, 0)
	if err != nil {
		return 0, wire.InodeStat{}, err
	}
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case ".":
			continue
		case "..":
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			if cur, err = c.getattr(ctx, stack[len(stack)-1], 0); err != nil {
				return 0, wire.InodeStat{}, err
			}
			continue
		}
		if cur.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			return 0, wire.InodeStat{}, syscall.ENOTDIR
		}
		if len(name) > maxName {
			return 0, wire.InodeStat{}, syscall.ENAMETOOLONG
		}
		st, err := c.lookup(ctx, stack[len(stack)-1], name)
		if err != nil {
			return 0, wire.InodeStat{}, err
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFLNK && (len(todo) > 0 || follow) {
			links++
			if links > maxSymlinks {
				return 0, wire.InodeStat{}, syscall.ELOOP
			}
			target := st.Symlink
			todo = append(split(target), todo...)
			if strings.HasPrefix(target, "/") {
				stack = stack[:1]
				if cur, err = c.getattr(ctx, c.rootIno, 0); err != nil {
					return 0, wire.InodeStat{}, err
				}
			}
			continue
		}
		stack = append(stack, st.Ino)
		cur = st
	}
	return stack[len(stack)-1], cur, nil
}

// walkParent resolves the directory of p and returns it with the last
// name of p.
func (c *Client) walkParent(ctx context.Context, p string) (uint64, string, error) {
	parts := split(p)
	if len(parts) == 0 {
		return 0, "", syscall.EEXIST // the root itself
	}
	name := parts[len(parts)-1]
	if name == "." || name == ".." {
		return 0, "", syscall.EINVAL
	}
	if len(name) > maxName {
		return 0, "", syscall.ENAMETOOLONG
	}
	dir, st, err := c.walk(ctx, strings.Join(parts[:len(parts)-1], "/"), true)
	if err != nil {
		return 0, "", err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return 0, "", syscall.ENOTDIR
	}
	return dir, name, nil
}

// lookup returns the inode name leads to in directory dir: from the
// dentry cache while its lease lasts and the inode's attributes are
// exact in the cache (ENOENT for a name leased as absent), else from the
// MDS.
func (c *Client) lookup(ctx context.Context, dir uint64, name string) (wire.InodeStat, error) {
	c.mu.Lock()
	now := c.clock.Now()
	if d, ok := c.dentries[dentryKey{dir, name}]; ok && now.Before(d.until) {
		if d.ino == 0 {
			c.mu.Unlock()
			return wire.InodeStat{}, syscall.ENOENT
		}
		if st, _, ok := c.cachedLocked(d.ino, now); ok {
			c.mu.Unlock()
			return st, nil
		}
	}
	c.mu.Unlock()
	r, err := c.do(ctx, &wire.ClientRequest{Op: wire.MetaLookup, Path: wire.FilePath{Ino: dir, Path: name}}, false)
	if err != nil {
		return wire.InodeStat{}, err
	}
	return target(r)
}

// target is the last inode of a reply's trace (ENOENT for a negative
// dentry).
func target(r *wire.ClientReply) (wire.InodeStat, error) {
	if len(r.Trace) == 0 {
		return wire.InodeStat{}, fmt.Errorf("the MDS's %s reply has no trace: %w", r.Op, syscall.EIO)
	}
	st := r.Trace[len(r.Trace)-1].Inode
	if st.Ino == 0 {
		return wire.InodeStat{}, syscall.ENOENT
	}
	return st, nil
}

// cachedStatCaps are the caps under which the client's cached
// attributes are exact: mode and owner (As), link count (Ls), size and
// times (Fs; or Fx, which makes the client's own size the size).
const cachedStatCaps = locker.AuthShared | locker.LinkShared

// openAttrTTL is how long a kernel may keep the attributes of a file
// open on this client while its caps keep them exact: a revocation makes
// it drop them before the client acks.
const openAttrTTL = time.Second

// cachedLocked returns ino's attributes if the cache has them exact —
// the caps held keep them (the paper's stat without a round trip), or a
// directory's lease does — and how long a kernel may keep them (0: it
// must ask again). c.mu is held.
func (c *Client) cachedLocked(ino uint64, now time.Time) (wire.InodeStat, time.Duration, bool) {
	in := c.inodes[ino]
	if in == nil || in.stat.Ino == 0 {
		return wire.InodeStat{}, 0, false
	}
	st := in.stat
	if now.Before(in.attrUntil) {
		return st, in.attrUntil.Sub(now), true
	}
	issued, _ := c.caps.Issued(ino)
	if issued&cachedStatCaps == cachedStatCaps && issued&(locker.FileShared|locker.FileExcl) != 0 && c.sess.CapsValid(now) {
		var ttl time.Duration
		if in.opens > 0 {
			ttl = openAttrTTL
		}
		if in.data != nil {
			// The open file's own writes may be ahead of the MDS.
			size, mtime, _, _ := in.data.DirtyAttrs()
			st.Size, st.Mtime = size, wire.FSTimeOf(mtime)
		}
		return st, ttl, true
	}
	return wire.InodeStat{}, 0, false
}

// getattr returns the attributes of ino: from the cache while caps or a
// lease keep them exact, else from the MDS, which collects size and
// mtime from writers.
func (c *Client) getattr(ctx context.Context, ino uint64, mask uint32) (wire.InodeStat, error) {
	c.mu.Lock()
	st, _, ok := c.cachedLocked(ino, c.clock.Now())
	c.mu.Unlock()
	if ok {
		return st, nil
	}
	r, err := c.do(ctx, &wire.ClientRequest{Op: wire.MetaGetattr, Path: wire.FilePath{Ino: ino}, Mask: mask}, false)
	if err != nil {
		return wire.InodeStat{}, err
	}
	return target(r)
}

// kernelStat returns the attributes of st's inode to give a kernel:
// the cached ones while caps or a lease keep them exact (they are at
// least as new as st, whose reply was absorbed before), with how long
// the kernel may keep them; else st with this client's own size, to be
// kept for no time. For name in dir (if not "") it also says how long
// the kernel may keep the name. Attributes and their validity are read
// together under the lock, and noted (kernelUntil): a cap message that
// changes them after this is told to the kernel (attrsChanged), one
// before is in the answer.
func (c *Client) kernelStat(dir uint64, name string, st *wire.InodeStat) *Stat {
	return c.kernelStatFor(dir, name, st, true)
}

// kernelStatFor is kernelStat; with keep false the attributes are given
// for no time and nothing is noted (a setattr's reply, which the kernel
// takes even when an invalidation came while it waited: a notification
// meant for it would only make the kernel drop a later getattr's reply).
func (c *Client) kernelStatFor(dir uint64, name string, st *wire.InodeStat, keep bool) *Stat {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	in := c.inodes[st.Ino]
	var s *Stat
	if cached, ttl, ok := c.cachedLocked(st.Ino, now); ok {
		if !keep {
			ttl = 0
		}
		s = statOf(&cached)
		s.AttrValid = ttl
		if until := now.Add(ttl); ttl > 0 && until.After(in.kernelUntil) {
			in.kernelUntil = until
		}
	} else {
		s = statOf(st)
		if in != nil && in.data != nil {
			// This client's own writes may be ahead of the MDS.
			s.Size = max(s.Size, in.data.Size())
			s.Blocks = (s.Size + 511) / 512
		}
	}
	if name != "" {
		if d, ok := c.dentries[dentryKey{dir, name}]; ok && d.ino == st.Ino && now.Before(d.until) {
			s.EntryValid = d.until.Sub(now)
		}
	}
	return s
}

package fusemount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Options are a mount's settings (the -o options of `cuttle mount`).
type Options struct {
	// FsName is what /proc/mounts and df show as the source (default
	// "cuttle").
	FsName string
	// AllowOther lets users other than the one who mounted reach the
	// mount (FUSE's allow_other; for a non-root mounter it needs
	// user_allow_other in /etc/fuse.conf).
	AllowOther bool
	// NoDefaultPermissions leaves permission checks to the MDS alone
	// (the kernel then asks ACCESS); by default the kernel checks mode
	// bits too, as with ceph-fuse.
	NoDefaultPermissions bool
	ReadOnly             bool
	// MaxReadAhead is the kernel's readahead for the mount (default 4 MiB).
	MaxReadAhead int
	// AttrTimeout, EntryTimeout and NegativeTimeout bound how long the
	// kernel may cache attributes, names and absent names (-o
	// attr_timeout=, entry_timeout=, negative_timeout=, in seconds).
	// The client says how long its caps and leases keep each exact, and
	// revokes them from the kernel when another client changes them;
	// 0 (the default) leaves that the only bound, a negative value turns
	// the kernel's caching off.
	AttrTimeout, EntryTimeout, NegativeTimeout time.Duration
	// Extra are further -o options passed to the kernel as they are.
	Extra []string
	Debug bool
	// Logger receives the mount's warnings (default slog.Default()).
	Logger *slog.Logger
}

// ErrNoFUSE says FUSE cannot be used on this machine; its message says
// what to install or load.
var ErrNoFUSE = errors.New("FUSE is not available")

// Invalidator is what an FS that caches may implement to learn how to
// drop what the kernel caches when the caps or leases that allowed it
// are revoked, or when another client changed a file under attributes
// the kernel keeps: Mount calls SetInvalidator with a function that
// drops an inode's attributes (never waiting for the kernel: it may be
// called from anywhere but within a request on the same inode), one that
// drops its attributes and its cached pages from an offset on, and one
// that drops a name from a directory. The last two may block until the
// kernel is done with a request on the same inode or directory: call
// them from a goroutine of their own, never from a request's, and wait
// for the pages one from nothing a request waits for.
type Invalidator interface {
	SetInvalidator(attrs func(ino uint64), data func(ino uint64, off int64), entry func(dir uint64, name string))
}

// Mount is a mounted file system.
type Mount struct {
	dir    string
	server *fuse.Server
}

// checkFUSE explains what is missing when FUSE cannot work here.
func checkFUSE() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("%w: /dev/fuse is missing (load the module: modprobe fuse; in a container, pass --device /dev/fuse)", ErrNoFUSE)
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			if _, err := exec.LookPath("fusermount"); err != nil {
				return fmt.Errorf("%w: mounting as a user needs fusermount3 (apt-get install fuse3), or mount as root", ErrNoFUSE)
			}
		}
	}
	return nil
}

// New mounts fs on dir and starts serving it; it returns once the
// kernel has the mount. ctx carries values to every request (its
// cancellation does not unmount: call Unmount).
func New(ctx context.Context, dir string, fs FS, opts Options) (*Mount, error) {
	if err := checkFUSE(); err != nil {
		return nil, err
	}
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("mount point %s: %w", dir, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("mount point %s is not a directory", dir)
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.Default()
	}
	mo := mountOptions(opts, lg)
	r := newRaw(ctx, fs, lg, timeouts{attrMax: opts.AttrTimeout, entryMax: opts.EntryTimeout, negativeMax: opts.NegativeTimeout})
	server, err := fuse.NewServer(r, dir, mo)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", dir, err)
	}
	if inv, ok := fs.(Invalidator); ok {
		// ENOENT from either: the kernel has no such node or name
		// cached; nothing to drop.
		inv.SetInvalidator(func(ino uint64) {
			// Offset -1: the attributes only, which takes no page
			// lock (the kernel holds one across a read in flight).
			server.InodeNotify(r.node(ino), -1, 0)
		}, func(ino uint64, off int64) {
			// From the page that holds off on.
			page := int64(os.Getpagesize())
			server.InodeNotify(r.node(ino), off/page*page, 0)
		}, func(dir uint64, name string) {
			server.EntryNotify(r.node(dir), name)
		})
	}
	go server.Serve()
	if err := server.WaitMount(); err != nil {
		server.Unmount()
		return nil, fmt.Errorf("mount %s: %w", dir, err)
	}
	return &Mount{dir: dir, server: server}, nil
}

func mountOptions(opts Options, lg *slog.Logger) *fuse.MountOptions {
	name := opts.FsName
	if name == "" {
		name = "cuttle"
	}
	ra := opts.MaxReadAhead
	if ra <= 0 {
		ra = 4 << 20
	}
	mo := &fuse.MountOptions{
		FsName:       name,
		Name:         "cuttle",
		AllowOther:   opts.AllowOther,
		MaxReadAhead: ra,
		MaxWrite:     1 << 20,
		EnableLocks:  true,
		// Reads and writes run concurrently down to the OSDs
		// (fsclient's range lock): let the kernel have as many in
		// flight. Without CAP_ASYNC_DIO the kernel makes an O_DIRECT
		// request of an asynchronous submission (libaio, io_uring)
		// wait for its answer before the next one goes, so an
		// application's iodepth 16 would reach us as 1; asynchronous
		// requests count as background ones, which go-fuse limits to
		// 12 by default.
		ExtraCapabilities: fuse.CAP_ASYNC_DIO,
		MaxBackground:     64,
		// Root mounts with mount(2) itself, no helper needed; others
		// fall back to fusermount.
		DirectMount: true,
		Debug:       opts.Debug,
		Logger:      slog.NewLogLogger(lg.Handler(), slog.LevelInfo),
	}
	if !opts.NoDefaultPermissions {
		mo.Options = append(mo.Options, "default_permissions")
	}
	if opts.ReadOnly {
		mo.Options = append(mo.Options, "ro")
	}
	mo.Options = append(mo.Options, opts.Extra...)
	return mo
}

// Dir is the mount point.
func (m *Mount) Dir() string { return m.dir }

// Unmount unmounts; it fails with EBUSY while files on the mount are
// open (as umount(8) does).
func (m *Mount) Unmount() error {
	if err := m.server.Unmount(); err != nil {
		return fmt.Errorf("unmount %s: %w", m.dir, err)
	}
	return nil
}

// Wait returns when the mount is gone (Unmount, or `umount` from
// outside).
func (m *Mount) Wait() { m.server.Wait() }

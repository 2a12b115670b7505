// Package mountcmd is `cuttle mount`: a Cuttle file system on a FUSE
// mount point, through fsclient and fusemount, in the foreground or as
// a daemon (the default, as ceph-fuse).
package mountcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/cuttlestore/cuttle/fsclient"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/fusemount"
	"github.com/cuttlestore/cuttle/internal/metrics"
)

// DialFunc connects to the cluster (cmdutil.DialFunc).
type DialFunc = cmdutil.DialFunc

// readyEnv names the descriptor a daemonized child reports on: "ok" once
// mounted, or the error.
const readyEnv = "CUTTLE_MOUNT_READY_FD"

type options struct {
	fs         string
	root       string
	opts       string
	foreground bool
	logFile    string
	metrics    string
}

// AddMountCommands adds "cuttle mount".
func AddMountCommands(root *cobra.Command, out *cmdutil.Output, dial DialFunc) {
	var o options
	c := &cobra.Command{
		Use:   "mount MOUNTPOINT",
		Short: "Mount a Cuttle file system with FUSE (as ceph-fuse)",
		Long: `Mounts a file system of the cluster on MOUNTPOINT through FUSE. By
default it returns once the file system is mounted and serves it from a
background process (its log in --log-file); -f keeps it in the foreground.
Unmount with "umount MOUNTPOINT" (or "fusermount3 -u" as a user); SIGTERM
to the mount process unmounts too.

Options (-o, comma-separated): allow_other (other users may reach the
mount), ro, nodefault_permissions (leave permission checks to the MDS
alone), fsname=NAME, debug; attr_timeout=S, entry_timeout=S and
negative_timeout=S cap (in seconds; 0: off) how long the kernel caches
attributes, names and absent names, which by default is as long as the
client's caps and the MDS's dentry leases keep them exact (another
client's change revokes them first); others are passed to the kernel as
they are.`,
		Example: `  cuttle mount /mnt/cuttle
  cuttle mount --fs cephfs -o allow_other /mnt/cuttle
  cuttle mount -f --root /projects/a /mnt/a`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			if !o.foreground && os.Getenv(readyEnv) == "" {
				return daemonize(cmd, out, o, dir)
			}
			return serve(cmd.Context(), out, dial, o, dir)
		},
	}
	c.Flags().StringVar(&o.fs, "fs", "cephfs", "the file system to mount")
	c.Flags().StringVar(&o.root, "root", "/", "the directory of the file system the mount starts at")
	c.Flags().StringVarP(&o.opts, "options", "o", "", "mount options, comma-separated (see above)")
	c.Flags().BoolVarP(&o.foreground, "foreground", "f", false, "stay in the foreground until unmounted")
	c.Flags().StringVar(&o.metrics, "metrics-addr", "", "serve the mount process's Go runtime metrics at http://ADDR/metrics and its profiler at /debug/pprof/ (default: off)")
	c.Flags().StringVar(&o.logFile, "log-file", "", "where the background process logs (default: a file in the temporary directory, printed)")
	root.AddCommand(c)
}

// parseOptions reads -o.
func parseOptions(s string) (fusemount.Options, error) {
	var mo fusemount.Options
	debug := false
	for _, opt := range strings.Split(s, ",") {
		switch opt = strings.TrimSpace(opt); {
		case opt == "":
		case opt == "allow_other":
			mo.AllowOther = true
		case opt == "ro":
			mo.ReadOnly = true
		case opt == "default_permissions":
		case opt == "nodefault_permissions":
			mo.NoDefaultPermissions = true
		case opt == "debug":
			debug = true
		case strings.HasPrefix(opt, "fsname="):
			mo.FsName = strings.TrimPrefix(opt, "fsname=")
		case strings.HasPrefix(opt, "attr_timeout="), strings.HasPrefix(opt, "entry_timeout="),
			strings.HasPrefix(opt, "negative_timeout="):
			k, v, _ := strings.Cut(opt, "=")
			secs, err := strconv.ParseFloat(v, 64)
			if err != nil || secs < 0 {
				return mo, fmt.Errorf("mount option %s: want seconds (0 turns the kernel's caching off), e.g. %s=0.5", opt, k)
			}
			d := time.Duration(secs * float64(time.Second))
			if d == 0 {
				d = -1 // off
			}
			switch k {
			case "attr_timeout":
				mo.AttrTimeout = d
			case "entry_timeout":
				mo.EntryTimeout = d
			default:
				mo.NegativeTimeout = d
			}
		default:
			mo.Extra = append(mo.Extra, opt)
		}
	}
	mo.Debug = debug
	return mo, nil
}

// serve mounts and serves until unmounted or signalled.
func serve(ctx context.Context, out *cmdutil.Output, dial DialFunc, o options, dir string) (err error) {
	ready := readyPipe()
	defer func() {
		if ready != nil {
			msg := "ok"
			if err != nil {
				msg = err.Error()
			}
			fmt.Fprintln(ready, msg)
			ready.Close()
		}
	}()
	mo, err := parseOptions(o.opts)
	if err != nil {
		return err
	}
	lg := slog.New(slog.NewTextHandler(os.Stderr, nil))
	mo.Logger = lg
	if o.metrics != "" {
		mctx, cancel := context.WithCancel(ctx)
		defer cancel()
		addr, err := metrics.Serve(mctx, o.metrics, metrics.NewRegistry(), lg)
		if err != nil {
			return err
		}
		lg.Info("serving metrics and the profiler", "addr", addr.String())
	}
	conn, err := dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	client, err := fsclient.Mount(ctx, conn, o.fs, fsclient.Options{Root: o.root, Logger: lg})
	if err != nil {
		return fmt.Errorf("mount %s: %w", o.fs, err)
	}
	defer client.Close(context.Background())
	m, err := fusemount.New(ctx, dir, fusemount.NewClientFS(client), mo)
	if err != nil {
		if errors.Is(err, fusemount.ErrNoFUSE) {
			return fmt.Errorf("%w (or use the fsclient library instead of a mount)", err)
		}
		return err
	}
	if ready != nil {
		fmt.Fprintln(ready, "ok")
		ready.Close()
		ready = nil
	} else if err := out.Print(map[string]any{"mountpoint": dir, "fs": o.fs, "root": o.root, "pid": os.Getpid()},
		func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "mounted %s on %s; unmount with: umount %s\n", o.fs, dir, dir)
			return err
		}); err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() { m.Wait(); close(done) }()
	select {
	case <-done:
	case s := <-sigs:
		lg.Info("unmounting", "signal", s.String(), "mountpoint", dir)
		if err := m.Unmount(); err != nil {
			// Files are open on it: detach it now, it goes when they close.
			lg.Warn("mount busy, detaching it", "err", err)
			if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
				return fmt.Errorf("unmount %s: %w", dir, err)
			}
		}
		<-done
	}
	return nil
}

// readyPipe is the daemonized child's line to its parent, or nil.
func readyPipe() *os.File {
	s := os.Getenv(readyEnv)
	if s == "" {
		return nil
	}
	os.Unsetenv(readyEnv)
	return os.NewFile(3, "ready")
}

// daemonize starts this command again in the background, in its own
// session, and returns once it reports the mount done (or its error).
func daemonize(cmd *cobra.Command, out *cmdutil.Output, o options, dir string) error {
	logPath := o.logFile
	if logPath == "" {
		logPath = filepath.Join(os.TempDir(), fmt.Sprintf("cuttle-mount-%s.log", strings.ReplaceAll(strings.Trim(dir, "/"), "/", "-")))
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self, os.Args[1:]...)
	child.Env = append(os.Environ(), readyEnv+"=3")
	child.ExtraFiles = []*os.File{w}
	child.Stdout, child.Stderr = logf, logf
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start the mount process: %w", err)
	}
	w.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	line = strings.TrimSpace(line)
	if err != nil && line == "" {
		child.Wait()
		return fmt.Errorf("the mount process ended before mounting; see %s", logPath)
	}
	if line != "ok" {
		child.Wait()
		return errors.New(line)
	}
	pid := child.Process.Pid
	child.Process.Release()
	return out.Print(map[string]any{"mountpoint": dir, "fs": o.fs, "root": o.root, "pid": pid, "log": logPath},
		func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "mounted %s on %s (process %d, log %s); unmount with: umount %s\n",
				o.fs, dir, pid, logPath, dir)
			return err
		})
}

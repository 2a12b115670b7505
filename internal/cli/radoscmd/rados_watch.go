package radoscmd

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/rados"
)

// Watch/notify commands, as Ceph's rados watch, notify and listwatchers.

// watchReport is one line of `rados watch`'s output: that the watch is
// registered, a notify it received (acked with --reply), or its loss.
type watchReport struct {
	Event     string `json:"event"` // "watching", "notify", "error"
	Pool      string `json:"pool"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Cookie    uint64 `json:"cookie"`
	NotifyID  uint64 `json:"notify_id,omitempty"`
	Notifier  string `json:"notifier,omitempty"`
	Payload   string `json:"payload,omitempty"`
	Base64    []byte `json:"payload_base64,omitempty"`
	Error     string `json:"error,omitempty"`
}

func radosWatchCommand(e *radosEnv) *cobra.Command {
	var reply string
	c := &cobra.Command{
		Use:   "watch OBJECT",
		Short: "Watch OBJECT: print each notify as it comes and ack it, until interrupted (Ctrl-C unwatches)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				var (
					mu   sync.Mutex
					lost = make(chan error, 1)
				)
				base := watchReport{Pool: e.pool, Namespace: e.ns, Name: name}
				print := func(r watchReport) {
					mu.Lock()
					defer mu.Unlock()
					e.out.Print(r, func(w io.Writer) error {
						var err error
						switch r.Event {
						case "watching":
							_, err = fmt.Fprintf(w, "watching %s (cookie %d); interrupt to stop\n", e.path(name), r.Cookie)
						case "notify":
							_, err = fmt.Fprintf(w, "notify %d from %s: %s\n", r.NotifyID, r.Notifier, r.Payload)
						default:
							_, err = fmt.Fprintf(w, "watch lost: %s\n", r.Error)
						}
						return err
					})
				}
				var cookie uint64
				ready := make(chan struct{})
				w, err := ioc.Watch(ctx, name, func(ev rados.WatchEvent) []byte {
					<-ready
					r := base
					r.Cookie = cookie
					if ev.Err != nil {
						r.Event, r.Error = "error", ev.Err.Error()
						print(r)
						lost <- ev.Err
						return nil
					}
					r.Event, r.NotifyID, r.Notifier, r.Payload, r.Base64 = "notify", ev.NotifyID, ev.Notifier, string(ev.Payload), ev.Payload
					print(r)
					return []byte(reply)
				})
				if err != nil {
					return radosFailure("watch "+e.path(name), err)
				}
				cookie = w.Cookie()
				r := base
				r.Event, r.Cookie = "watching", cookie
				print(r)
				close(ready)
				select {
				case <-ctx.Done():
				case err := <-lost:
					return radosFailure("watch "+e.path(name), fmt.Errorf("%w; watch again to resume", err))
				}
				uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				return radosFailure("unwatch "+e.path(name), w.Unwatch(uctx))
			})
		},
	}
	c.Flags().StringVar(&reply, "reply", "", "payload to answer each notify with")
	return c
}

// notifyReport is the JSON result of `rados notify`.
type notifyReport struct {
	Pool      string            `json:"pool"`
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Acks      []ackReport       `json:"acks"`
	TimedOut  []rados.WatcherID `json:"timed_out"`
}

type ackReport struct {
	rados.WatcherID
	Payload string `json:"payload"`
	Base64  []byte `json:"payload_base64"`
}

func radosNotifyCommand(e *radosEnv) *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "notify OBJECT MESSAGE",
		Short: "Send MESSAGE to every watcher of OBJECT and print their replies (fails if some did not reply)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				res, nerr := ioc.Notify(ctx, name, []byte(args[1]), timeout)
				if nerr != nil && res.Acks == nil && res.TimedOut == nil {
					return radosFailure("notify "+e.path(name), nerr)
				}
				r := notifyReport{Pool: e.pool, Namespace: e.ns, Name: name, Acks: []ackReport{}, TimedOut: res.TimedOut}
				if r.TimedOut == nil {
					r.TimedOut = []rados.WatcherID{}
				}
				for _, a := range res.Acks {
					r.Acks = append(r.Acks, ackReport{WatcherID: a.WatcherID, Payload: string(a.Payload), Base64: a.Payload})
				}
				err := e.out.Print(r, func(w io.Writer) error {
					for _, a := range r.Acks {
						if _, err := fmt.Fprintf(w, "reply from %s cookie %d: %s\n", a.Client, a.Cookie, a.Payload); err != nil {
							return err
						}
					}
					for _, t := range r.TimedOut {
						if _, err := fmt.Fprintf(w, "timed out: %s cookie %d\n", t.Client, t.Cookie); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
				if nerr != nil {
					return radosFailure("notify "+e.path(name), fmt.Errorf("%w (raise --timeout if they are slow)", nerr))
				}
				return nil
			})
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for the watchers' replies (at most 1h)")
	return c
}

// watchersReport is the JSON result of `rados listwatchers`.
type watchersReport struct {
	Pool      string              `json:"pool"`
	Namespace string              `json:"namespace"`
	Name      string              `json:"name"`
	Watchers  []rados.WatcherInfo `json:"watchers"`
}

func radosListWatchersCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "listwatchers OBJECT",
		Short: "List the watchers of OBJECT",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				ws, err := ioc.ListWatchers(ctx, name)
				if err != nil {
					return radosFailure("listwatchers "+e.path(name), err)
				}
				r := watchersReport{Pool: e.pool, Namespace: e.ns, Name: name, Watchers: ws}
				if r.Watchers == nil {
					r.Watchers = []rados.WatcherInfo{}
				}
				return e.out.Print(r, func(w io.Writer) error {
					for _, x := range ws {
						timeout := "default"
						if x.Timeout > 0 {
							timeout = x.Timeout.String()
						}
						if _, err := fmt.Fprintf(w, "watcher=%s cookie=%d timeout=%s\n", x.Client, x.Cookie, timeout); err != nil {
							return err
						}
					}
					return nil
				})
			})
		},
	}
}

package s3cmd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/s3gw"
)

// openAccessLog opens the access log path names ("" none, "-" standard
// error) and reopens it on every SIGHUP until ctx ends, for logrotate.
func openAccessLog(ctx context.Context, path string, log *slog.Logger) (*s3gw.AccessLog, error) {
	if path == "" {
		return nil, nil
	}
	l, err := s3gw.OpenAccessLog(path)
	if err != nil {
		return nil, &cliError{msg: fmt.Sprintf("s3 serve: --access-log %s: %v; give a file the gateway may append to, or - for stderr", path, err), err: err}
	}
	if path == "-" {
		return l, nil
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				_ = l.Close()
				return
			case <-hup:
				if err := l.Reopen(); err != nil {
					log.Warn("access log: reopen", "path", path, "err", err)
				} else {
					log.Info("access log reopened", "path", path)
				}
			}
		}
	}()
	return l, nil
}

package mon

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
)

// raftLogger sends etcd raft's log lines to slog. Raft calls Fatal and
// Panic only on broken invariants of its own state; like raft's default
// logger, they end the process.
type raftLogger struct{ log *slog.Logger }

func (l raftLogger) Debug(v ...any)                 { l.log.Debug(fmt.Sprint(v...)) }
func (l raftLogger) Debugf(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l raftLogger) Info(v ...any)                  { l.log.Debug(fmt.Sprint(v...)) }
func (l raftLogger) Infof(format string, v ...any)  { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l raftLogger) Warning(v ...any)               { l.log.Warn(fmt.Sprint(v...)) }
func (l raftLogger) Warningf(format string, v ...any) {
	l.log.Warn(fmt.Sprintf(format, v...))
}
func (l raftLogger) Error(v ...any)                 { l.log.Error(fmt.Sprint(v...)) }
func (l raftLogger) Errorf(format string, v ...any) { l.log.Error(fmt.Sprintf(format, v...)) }
func (l raftLogger) Fatal(v ...any)                 { l.fatal(fmt.Sprint(v...)) }
func (l raftLogger) Fatalf(format string, v ...any) { l.fatal(fmt.Sprintf(format, v...)) }
func (l raftLogger) Panic(v ...any)                 { panic(errors.New(fmt.Sprint(v...))) }
func (l raftLogger) Panicf(format string, v ...any) { panic(fmt.Errorf(format, v...)) }

func (l raftLogger) fatal(msg string) {
	l.log.Error("raft: fatal: " + msg)
	os.Exit(1)
}

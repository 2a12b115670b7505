package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// daemonEnv makes the test binary act as the cuttle binary, so that
// multi-process tests run real daemons without building one.
const daemonEnv = "CUTTLE_TEST_AS_CUTTLE"

func TestMain(m *testing.M) {
	if os.Getenv(daemonEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		root := NewRootCommand(os.Stdout, os.Stderr)
		root.SetArgs(os.Args[1:])
		err := root.ExecuteContext(ctx)
		stop()
		if err != nil {
			fmt.Fprintf(os.Stderr, "cuttle: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

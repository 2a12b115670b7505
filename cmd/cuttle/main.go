// Command cuttle is the single binary of the Cuttle storage system: the
// command-line tool and, as its subcommands, the daemons.
//
// main only connects the process to the command tree built by
// internal/cli: it supplies stdout and stderr and the default cluster
// configuration file ($CUTTLE_CONF, else ./.cuttle/cuttle.conf), cancels
// the context on SIGINT or SIGTERM, and turns an error into a message on
// stderr and a non-zero exit status. Everything else lives in the libraries.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	conf := os.Getenv("CUTTLE_CONF")
	if conf == "" {
		conf = cli.DefaultConfPath
	}
	err := cli.NewRootCommandConf(os.Stdout, os.Stderr, conf).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cuttle: %v\n", err)
		os.Exit(1)
	}
}

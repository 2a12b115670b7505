// Package clitest runs a cuttle command family in process against a
// simulated cluster (a monitor and three OSDs on memnet), inside the
// calling test's synctest bubble: what the command packages' tests share.
package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
)

// AddFunc registers a command family on root, as the packages' Add*Commands.
type AddFunc func(root *cobra.Command, out *cmdutil.Output, dial cmdutil.DialFunc)

// CLI is a command family against a simulated cluster.
type CLI struct {
	T     *testing.T
	C     *sim.Cluster
	add   AddFunc
	dials int
}

// Cluster starts a simulated cluster with three OSDs (hosts h1-h3) whose
// network is seeded with seed.
func Cluster(t *testing.T, seed uint64) *sim.Cluster {
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: seed, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	return c
}

// New runs the family add registers against c.
func New(t *testing.T, c *sim.Cluster, add AddFunc) *CLI { return &CLI{T: t, C: c, add: add} }

// Dial connects a new client, from a host of its own.
func (s *CLI) Dial(ctx context.Context) (*rados.Conn, error) {
	s.dials++
	return rados.Connect(ctx, rados.Config{Mons: []string{"a=a:6789"}, Auth: "none", Network: s.C.Net.Host(fmt.Sprintf("cli%d", s.dials)), Seed: uint64(s.dials)})
}

// Run runs `cuttle ARGS...` and returns what it printed.
func (s *CLI) Run(args ...string) (string, error) { return s.RunIn(nil, args...) }

// RunIn runs `cuttle ARGS...` with stdin in (nil: the process's).
func (s *CLI) RunIn(in []byte, args ...string) (string, error) {
	var stdout bytes.Buffer
	out := &cmdutil.Output{Format: cmdutil.FormatPlain, W: &stdout}
	root := &cobra.Command{Use: "cuttle", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().Var((*cmdutil.FormatFlag)(&out.Format), "format", "")
	s.add(root, out, s.Dial)
	if in != nil {
		root.SetIn(bytes.NewReader(in))
	}
	root.SetOut(&stdout)
	root.SetErr(&stdout)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return stdout.String(), err
}

// Must runs `cuttle ARGS...` and fails the test if it fails.
func (s *CLI) Must(args ...string) string {
	s.T.Helper()
	out, err := s.Run(args...)
	if err != nil {
		s.T.Fatalf("cuttle %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// JSON runs `cuttle --format json ARGS...` and decodes what it printed into v.
func (s *CLI) JSON(v any, args ...string) {
	s.T.Helper()
	out := s.Must(append([]string{"--format", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		s.T.Fatalf("cuttle %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

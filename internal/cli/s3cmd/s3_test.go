package s3cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
)

type simS3 struct {
	t     *testing.T
	c     *sim.Cluster
	dials int
}

func (s *simS3) dial(ctx context.Context) (*rados.Conn, error) {
	s.dials++
	return rados.Connect(ctx, rados.Config{Mons: []string{"a=a:6789"}, Auth: "none", Network: s.c.Net.Host(fmt.Sprintf("cli%d", s.dials)), Seed: uint64(s.dials)})
}

func (s *simS3) run(args ...string) (string, error) {
	var stdout bytes.Buffer
	out := &cmdutil.Output{Format: cmdutil.FormatPlain, W: &stdout}
	root := &cobra.Command{Use: "cuttle", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().Var((*cmdutil.FormatFlag)(&out.Format), "format", "")
	AddS3Commands(root, out, s.dial)
	root.SetOut(&stdout)
	root.SetErr(&stdout)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return stdout.String(), err
}

func (s *simS3) must(args ...string) string {
	s.t.Helper()
	out, err := s.run(args...)
	if err != nil {
		s.t.Fatalf("cuttle %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// The user and key commands, plain and JSON, and their refusals.
func TestUserCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 3, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
		for _, h := range []string{"h1", "h2", "h3"} {
			c.AddOSD(h)
		}
		s := &simS3{t: t, c: c}
		if _, err := s.run("s3", "user", "ls"); err == nil || !strings.Contains(err.Error(), "cuttle s3 user create") {
			t.Fatalf("ls before any user: %v", err)
		}
		var u userReport
		if err := json.Unmarshal([]byte(s.must("s3", "user", "create", "alice", "--format", "json")), &u); err != nil || u.User != "alice" || len(u.Keys) != 1 || u.Keys[0].SecretKey == "" {
			t.Fatalf("create: %+v %v", u, err)
		}
		if out := s.must("s3", "user", "create", "bob", "--display-name", "Bob B"); !strings.Contains(out, "access key:") || !strings.Contains(out, "Bob B") {
			t.Fatalf("create plain: %q", out)
		}
		if _, err := s.run("s3", "user", "create", "alice"); !errors.Is(err, meta.ErrUserExists) || !strings.HasSuffix(err.Error(), "(EEXIST)") {
			t.Fatalf("create twice: %v", err)
		}
		if _, err := s.run("s3", "user", "create", "no/slash"); !strings.HasSuffix(fmt.Sprint(err), "(EINVAL)") {
			t.Fatalf("bad name: %v", err)
		}
		if got := s.must("s3", "user", "ls"); got != "alice\nbob\n" {
			t.Fatalf("ls: %q", got)
		}
		var k keyReport
		if err := json.Unmarshal([]byte(s.must("s3", "key", "create", "alice", "--format", "json")), &k); err != nil || k.AccessKey == "" {
			t.Fatalf("key create: %+v %v", k, err)
		}
		if err := json.Unmarshal([]byte(s.must("s3", "user", "info", "alice", "--format", "json")), &u); err != nil || len(u.Keys) != 2 || u.Keys[1].AccessKey != k.AccessKey {
			t.Fatalf("info: %+v %v", u, err)
		}
		s.must("s3", "key", "rm", "alice", k.AccessKey)
		if _, err := s.run("s3", "key", "rm", "alice", k.AccessKey); !strings.HasSuffix(fmt.Sprint(err), "(ENOENT)") {
			t.Fatalf("key rm twice: %v", err)
		}
		s.must("s3", "user", "rm", "bob")
		if _, err := s.run("s3", "user", "info", "bob"); !errors.Is(err, meta.ErrNoSuchUser) || !strings.HasSuffix(err.Error(), "(ENOENT)") {
			t.Fatalf("info of a removed user: %v", err)
		}
		var names []string
		if err := json.Unmarshal([]byte(s.must("s3", "user", "ls", "--format", "json")), &names); err != nil || len(names) != 1 || names[0] != "alice" {
			t.Fatalf("ls json: %v %v", names, err)
		}
	})
}

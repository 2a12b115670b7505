package s3cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/cli/clitest"
	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// The user and key commands, plain and JSON, and their refusals.
func TestUserCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := clitest.New(t, clitest.Cluster(t, 3), AddS3Commands)
		if _, err := s.Run("s3", "user", "ls"); err == nil || !strings.Contains(err.Error(), "cuttle s3 user create") {
			t.Fatalf("ls before any user: %v", err)
		}
		var u userReport
		if err := json.Unmarshal([]byte(s.Must("s3", "user", "create", "alice", "--format", "json")), &u); err != nil || u.User != "alice" || len(u.Keys) != 1 || u.Keys[0].SecretKey == "" {
			t.Fatalf("create: %+v %v", u, err)
		}
		if out := s.Must("s3", "user", "create", "bob", "--display-name", "Bob B"); !strings.Contains(out, "access key:") || !strings.Contains(out, "Bob B") {
			t.Fatalf("create plain: %q", out)
		}
		if _, err := s.Run("s3", "user", "create", "alice"); !errors.Is(err, meta.ErrUserExists) || !strings.HasSuffix(err.Error(), "(EEXIST)") {
			t.Fatalf("create twice: %v", err)
		}
		if _, err := s.Run("s3", "user", "create", "no/slash"); !strings.HasSuffix(fmt.Sprint(err), "(EINVAL)") {
			t.Fatalf("bad name: %v", err)
		}
		if got := s.Must("s3", "user", "ls"); got != "alice\nbob\n" {
			t.Fatalf("ls: %q", got)
		}
		var k keyReport
		if err := json.Unmarshal([]byte(s.Must("s3", "key", "create", "alice", "--format", "json")), &k); err != nil || k.AccessKey == "" {
			t.Fatalf("key create: %+v %v", k, err)
		}
		if err := json.Unmarshal([]byte(s.Must("s3", "user", "info", "alice", "--format", "json")), &u); err != nil || len(u.Keys) != 2 || u.Keys[1].AccessKey != k.AccessKey {
			t.Fatalf("info: %+v %v", u, err)
		}
		s.Must("s3", "key", "rm", "alice", k.AccessKey)
		if _, err := s.Run("s3", "key", "rm", "alice", k.AccessKey); !strings.HasSuffix(fmt.Sprint(err), "(ENOENT)") {
			t.Fatalf("key rm twice: %v", err)
		}
		s.Must("s3", "user", "rm", "bob")
		if _, err := s.Run("s3", "user", "info", "bob"); !errors.Is(err, meta.ErrNoSuchUser) || !strings.HasSuffix(err.Error(), "(ENOENT)") {
			t.Fatalf("info of a removed user: %v", err)
		}
		var names []string
		if err := json.Unmarshal([]byte(s.Must("s3", "user", "ls", "--format", "json")), &names); err != nil || len(names) != 1 || names[0] != "alice" {
			t.Fatalf("ls json: %v %v", names, err)
		}
	})
}

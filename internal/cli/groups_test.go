package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// groupPaths lists the argument paths of every command in a fresh tree that
// has subcommands, the root ([]string{}) included.
func groupPaths(t *testing.T) [][]string {
	t.Helper()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() {
			paths = append(paths, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	root := NewRootCommand(io.Discard, io.Discard)
	root.InitDefaultCompletionCmd()
	walk(root, []string{})
	if len(paths) < 10 {
		t.Fatalf("found only %d command groups: %v", len(paths), paths)
	}
	return paths
}

// Issue 35: "cuttle osd df" (no such command) printed the help of "cuttle
// osd" and exited 0, so a script could not tell that nothing ran. Every
// group, the ones added after this test was written too, must fail.
func TestUnknownSubcommandFailsInEveryGroup(t *testing.T) {
	for _, path := range groupPaths(t) {
		cmdPath := strings.TrimSpace("cuttle " + strings.Join(path, " "))
		t.Run(cmdPath, func(t *testing.T) {
			stdout, stderr, err := run(t, append(path, "no-such-command")...)
			if err == nil {
				t.Fatalf("no error; stdout %q", stdout)
			}
			want := `unknown command "no-such-command" for "` + cmdPath + `"`
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
			if !strings.HasSuffix(err.Error(), "Run '"+cmdPath+" --help' for usage.") {
				t.Errorf("error %q does not point to --help", err)
			}
			if stdout != "" || stderr != "" {
				t.Errorf("printed stdout %q stderr %q; the error alone should be printed (by main)", stdout, stderr)
			}
		})
	}
}

func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string
		suggest string
	}{
		{[]string{"nosuch"}, `unknown command "nosuch" for "cuttle"`, ""},
		{[]string{"osd", "dum"}, `unknown command "dum" for "cuttle osd"`, "dump"},
		{[]string{"osd", "pool", "crate"}, `unknown command "crate" for "cuttle osd pool"`, "create"},
		{[]string{"radso"}, `unknown command "radso" for "cuttle"`, "rados"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%v: error %q does not start with %q", tc.args, msg, tc.want)
		}
		_, suggestions, _ := strings.Cut(msg, "Did you mean this?\n")
		if tc.suggest != "" && !strings.Contains(suggestions, "\t"+tc.suggest+"\n") {
			t.Errorf("%v: error %q does not suggest %q", tc.args, msg, tc.suggest)
		}
		if tc.suggest == "" && strings.Contains(msg, "Did you mean") {
			t.Errorf("%v: error %q suggests something", tc.args, msg)
		}
	}
}

// A group given no command prints its help on stderr and fails; asked for
// help, it prints the same help on stdout and succeeds.
func TestGroupWithoutCommand(t *testing.T) {
	for _, path := range [][]string{{}, {"osd"}, {"osd", "pool"}, {"rados"}} {
		cmdPath := strings.TrimSpace("cuttle " + strings.Join(path, " "))
		stdout, stderr, err := run(t, path...)
		if err == nil {
			t.Errorf("%s: no error", cmdPath)
			continue
		}
		if want := `no command given for "` + cmdPath + `"`; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %q does not start with %q", cmdPath, err, want)
		}
		if stdout != "" {
			t.Errorf("%s: stdout %q", cmdPath, stdout)
		}
		if !strings.Contains(stderr, "Available Commands:") {
			t.Errorf("%s: stderr does not hold the help: %q", cmdPath, stderr)
		}
		help, helpErr, err := run(t, append(path, "--help")...)
		if err != nil || helpErr != "" {
			t.Errorf("%s --help: %v, stderr %q", cmdPath, err, helpErr)
		}
		if help != stderr {
			t.Errorf("%s --help printed\n%s\nnot the help printed without a command\n%s", cmdPath, help, stderr)
		}
		// A group's usage does not offer running it without a command.
		if strings.Contains(help, "\n  "+cmdPath+" [flags]\n") || strings.Contains(help, "\n  "+cmdPath+"\n") {
			t.Errorf("%s --help offers running the group alone:\n%s", cmdPath, help)
		}
	}
	// "cuttle help osd" still succeeds.
	if _, _, err := run(t, "help", "osd"); err != nil {
		t.Errorf("help osd: %v", err)
	}
	// A command's own usage line is still shown.
	help, _, _ := run(t, "osd", "dump", "--help")
	if !strings.Contains(help, "\n  cuttle osd dump [EPOCH] [flags]\n") {
		t.Errorf("osd dump --help lost its usage line:\n%s", help)
	}
}

// strictGroups covers groups it has never seen, such as the ones other
// families add later.
func TestStrictGroupsCoversNewGroups(t *testing.T) {
	ran := false
	root := &cobra.Command{Use: "cuttle", SilenceErrors: true, SilenceUsage: true}
	group := &cobra.Command{Use: "newgroup"}
	inner := &cobra.Command{Use: "inner"}
	inner.AddCommand(&cobra.Command{Use: "leaf", RunE: func(*cobra.Command, []string) error { ran = true; return nil }})
	group.AddCommand(inner)
	root.AddCommand(group)
	strictGroups(root)
	for _, args := range [][]string{{"newgroup", "df"}, {"newgroup", "inner", "lef"}} {
		root.SetArgs(args)
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		if err := root.ExecuteContext(context.Background()); err == nil || !strings.Contains(err.Error(), "unknown command") {
			t.Errorf("%v: err = %v", args, err)
		}
	}
	root.SetArgs([]string{"newgroup", "inner", "leaf"})
	if err := root.ExecuteContext(context.Background()); err != nil || !ran {
		t.Errorf("leaf: err = %v, ran = %v", err, ran)
	}
}

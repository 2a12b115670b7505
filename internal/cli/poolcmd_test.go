package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// "cuttle osd pool set --help" lists every variable the monitors take,
// one line each, and says how to confirm the risky ones.
func TestPoolSetHelpListsVariables(t *testing.T) {
	stdout, _, err := run(t, "osd", "pool", "set", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"size", "min_size", "pg_num", "pgp_num", "pgp_num_actual", "crush_rule",
		"pg_autoscale_mode", "target_size_bytes", "target_size_ratio", "pg_autoscale_bias", "ack"} {
		found := false
		for _, line := range strings.Split(stdout, "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == v {
				found = true
			}
		}
		if !found {
			t.Errorf("no line for variable %s in:\n%s", v, stdout)
		}
	}
	for _, want := range []string{"split each PG in place", "--yes-i-really-mean-it"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, stdout)
		}
	}
}

// Every flag of "cuttle osd pool create" and "set" has a description,
// and --help shows it.
func TestPoolCommandFlagsAreDescribed(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard)
	for _, path := range [][]string{{"osd", "pool", "create"}, {"osd", "pool", "set"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		stdout, _, err := run(t, append(path, "--help")...)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			n++
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("%s: flag --%s has no description", strings.Join(path, " "), f.Name)
			} else if usage, _ := pflag.UnquoteUsage(f); !strings.Contains(stdout, usage) {
				t.Errorf("%s --help does not show --%s's description %q", strings.Join(path, " "), f.Name, usage)
			}
		})
		if n == 0 {
			t.Errorf("%s: no flags", strings.Join(path, " "))
		}
	}
	create, _, _ := root.Find([]string{"osd", "pool", "create"})
	for _, name := range []string{"size", "min-size", "rule", "yes-i-really-mean-it"} {
		if create.Flags().Lookup(name) == nil {
			t.Errorf("osd pool create has no --%s", name)
		}
	}
}

package mapcmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

// TestCrushTestMatchesCrushtool runs "cuttle crush test --show-mappings"
// with crushtool's options for a selection of vector cases (reweights,
// pool ids, weight sets, indep holes) and expects crushtool's exact output.
func TestCrushTestMatchesCrushtool(t *testing.T) {
	picked := map[string]bool{}
	for _, c := range crushvectors.Cases(t) {
		kind := "plain"
		switch {
		case len(c.Reweights) > 0:
			kind = "reweight"
		case c.PoolID != nil:
			kind = "pool"
		case strings.HasPrefix(c.ID, "choose_args"):
			kind = "choose_args"
		case strings.HasPrefix(c.ID, "ec."):
			kind = "ec"
		}
		if picked[kind] {
			continue
		}
		picked[kind] = true
		t.Run(c.ID, func(t *testing.T) {
			args := []string{"crush", "test", "-i", crushvectors.Path(t, c.MapTxt), "--show-mappings",
				"--rule", strconv.Itoa(int(c.Rule)), "--num-rep", strconv.Itoa(c.NumRep), "--min-x", "0", "--max-x", "9999"}
			for _, rw := range c.Reweights {
				args = append(args, "--weight", strconv.Itoa(int(rw.OSD)), rw.Arg)
			}
			if c.PoolID != nil {
				args = append(args, "--pool-id", strconv.FormatInt(*c.PoolID, 10))
			}
			stdout, _, err := run(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if want := crushvectors.MappingText(t, c); stdout != want {
				t.Fatalf("output differs from crushtool's (args %v)", args)
			}
		})
	}
	if len(picked) < 5 {
		t.Fatalf("only %d kinds of case found", len(picked))
	}
}

// Outputs of crushtool 16.2.15 for the same options, recorded from
// "crushtool -i maps/NAME.bin --test ..." on the vector maps.
const (
	weightedUtilization = `rule 0 (weighted_firstn), x = 0..99, numrep = 3..3
rule 0 (weighted_firstn) num_rep 3 result size == 3:	100/100
  device 0:		 stored : 21	 expected : 25
  device 1:		 stored : 5	 expected : 25
  device 2:		 stored : 40	 expected : 25
  device 4:		 stored : 29	 expected : 25
  device 6:		 stored : 63	 expected : 25
  device 7:		 stored : 18	 expected : 25
  device 9:		 stored : 77	 expected : 25
  device 10:		 stored : 6	 expected : 25
  device 11:		 stored : 41	 expected : 25
`
	hostsReweighted = `rule 0 (replicated_rule), x = 0..9, numrep = 3..3
rule 0 (replicated_rule) num_rep 3 result size == 3:	10/10
  device 0:		 stored : 2	 expected : 2.6087
  device 1:		 stored : 2	 expected : 2.6087
  device 2:		 stored : 4	 expected : 2.6087
  device 3:		 stored : 1	 expected : 2.6087
  device 4:		 stored : 3	 expected : 2.6087
  device 5:		 stored : 1	 expected : 2.6087
  device 6:		 stored : 3	 expected : 2.6087
  device 7:		 stored : 3	 expected : 2.6087
  device 8:		 stored : 4	 expected : 2.6087
  device 9:		 stored : 3	 expected : 1.30435
  device 10:		 stored : 2	 expected : 2.6087
  device 11:		 stored : 2	 expected : 2.6087
`
)

func TestCrushTestStatisticsMatchCrushtool(t *testing.T) {
	maps := crushvectors.Path(t, "maps")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-i", maps + "/weighted.txt", "--show-utilization", "--show-statistics", "--rule", "0", "--num-rep", "3", "--max-x", "99"}, weightedUtilization},
		{[]string{"-i", maps + "/hosts.txt", "--show-utilization", "--rule", "0", "--num-rep", "3", "--max-x", "9", "--weight", "9", "0.5"}, hostsReweighted},
	}
	for _, tc := range tests {
		stdout, _, err := run(t, append([]string{"crush", "test"}, tc.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if stdout != tc.want {
			t.Errorf("crush test %v:\n%s\nwant:\n%s", tc.args, stdout, tc.want)
		}
	}
}

func TestCrushTestBadMappingsAndJSON(t *testing.T) {
	mapPath := crushvectors.Path(t, "maps/ec.txt")
	stdout, _, err := run(t, "crush", "test", "-i", mapPath, "--rule", "1", "--num-rep", "9", "--max-x", "3", "--show-bad-mappings")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "bad mapping rule 1 x 0 num_rep 9 result [9,7,14,2,3,20,2147483647,23,15]\n") {
		t.Errorf("bad mappings:\n%s", stdout)
	}
	stdout, _, err = run(t, "--format", "json", "crush", "test", "-i", mapPath, "--rule", "1", "--num-rep", "9",
		"--max-x", "3", "--show-mappings", "--show-utilization", "--show-bad-mappings")
	if err != nil {
		t.Fatal(err)
	}
	var got []crushTestResult
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if len(got) != 1 || len(got[0].Mappings) != 4 || got[0].Mappings[0].OSDs[6] != 2147483647 || got[0].ResultSizes["9"] != 4 ||
		len(got[0].BadMappings) == 0 || got[0].BadMappings[0].X != 0 {
		t.Errorf("json result %+v", got)
	}
}

func TestCrushTreeMatchesCrushtool(t *testing.T) {
	for _, name := range []string{"classes", "choose_args_compat", "large", "alg_tree"} {
		stdout, _, err := run(t, "crush", "tree", "-i", crushvectors.Path(t, "maps/"+name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		want := crushvectors.ReadFile(t, "maps/"+name+".tree")
		if stdout != string(want) {
			t.Errorf("%s: tree differs from crushtool --tree:\n%s", name, stdout)
		}
	}
}

func TestCrushCompileDecompileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := crushvectors.Path(t, "maps/classes.txt")
	bin := filepath.Join(dir, "map.bin")
	stdout, _, err := run(t, "crush", "compile", "-i", src, "-o", bin)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "17 devices") {
		t.Errorf("compile said %q", stdout)
	}
	text, _, err := run(t, "crush", "decompile", "-i", bin)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(src)
	if text != string(want) {
		t.Error("decompile(compile(classes.txt)) differs from crushtool -d")
	}
}

func TestCrushBuild(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "map.txt")
	if _, _, err := run(t, "crush", "build", "--racks", "3", "--hosts", "3", "--osds-per-host", "4", "--text", "-o", out); err != nil {
		t.Fatal(err)
	}
	// The builder's layout is the racks vector map: same mappings.
	stdout, _, err := run(t, "crush", "test", "-i", out, "--rule", "0", "--num-rep", "3", "--max-x", "2", "--show-mappings")
	if err != nil {
		t.Fatal(err)
	}
	if want := "CRUSH rule 0 x 0 [8,33,3]\nCRUSH rule 0 x 1 [3,31,15]\nCRUSH rule 0 x 2 [22,8,16]\n"; stdout != want {
		t.Errorf("got\n%s", stdout)
	}
	if _, _, err := run(t, "crush", "build", "--hosts", "0", "-o", out); err == nil {
		t.Error("zero hosts accepted")
	}
}

func TestCrushErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("device 0 osd.0\ntype 0 osd\ntype 1 host\nhost h {\n\tid -1\n\talg straw9\n}\n"), 0o644)
	maps := crushvectors.Path(t, "maps")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"crush", "compile", "-i", bad, "-o", filepath.Join(dir, "x")}, "line 6, column 6"},
		{[]string{"crush", "test", "-i", filepath.Join(dir, "missing.txt")}, "no such file"},
		{[]string{"crush", "test"}, "no map given"},
		{[]string{"crush", "test", "-i", maps + "/hosts.txt", "--rule", "7"}, "no rule 7"},
		{[]string{"crush", "test", "-i", maps + "/hosts.txt", "--weight", "99", "0.5"}, "no device 99"},
		{[]string{"crush", "test", "-i", maps + "/hosts.txt", "--weight", "3", "heavy"}, "invalid syntax"},
		{[]string{"crush", "test", "-i", maps + "/hosts.txt", "--weight", "3"}, "missing weight"},
		{[]string{"crush", "test", "-i", maps + "/hosts.txt", "extra"}, "unexpected argument"},
		{[]string{"crush", "compile", "-i", maps + "/hosts.txt"}, "no output file"},
	}
	for _, tc := range tests {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

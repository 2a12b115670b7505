package mapcmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

// "cuttle crush rule create-hybrid" adds Ceph's SSD-primary rule to a
// map: the new rule (id 6 beside Ceph's own rule 5) places inputs exactly
// as crushtool placed them with rule 5, and "crush test
// --check-primary-class" reports every primary an SSD, no two HDD copies
// on one host, and the caveat: a copy on the primary's host in 4,595 of
// 10,000 results.
func TestCreateHybridRuleMatchesCrushtool(t *testing.T) {
	out := filepath.Join(t.TempDir(), "hybrid.txt")
	stdout, _, err := run(t, "crush", "rule", "create-hybrid", "mixed", "-i", crushvectors.Path(t, "maps/classes.txt"), "-o", out,
		"--primary-class", "ssd", "--replica-class", "hdd", "--failure-domain", "host")
	if err != nil || !strings.Contains(stdout, "rule mixed (id 6)") {
		t.Fatalf("create-hybrid: %q %v", stdout, err)
	}
	var want string
	for _, c := range crushvectors.Cases(t) {
		if c.Map == "classes" && c.Rule == 5 && c.NumRep == 3 && len(c.Reweights) == 0 && c.PoolID == nil {
			want = strings.ReplaceAll(crushvectors.MappingText(t, c), "CRUSH rule 5 ", "CRUSH rule 6 ")
		}
	}
	if want == "" {
		t.Fatal("no vector of rule 5 at num_rep 3")
	}
	stdout, _, err = run(t, "crush", "test", "-i", out, "--rule", "6", "--num-rep", "3", "--min-x", "0", "--max-x", "9999", "--show-mappings")
	if err != nil || stdout != want {
		t.Fatalf("the created rule's mappings differ from crushtool's for Ceph's rule (%v)", err)
	}
	stdout, _, err = run(t, "crush", "test", "-i", out, "--rule", "6", "--num-rep", "3", "--min-x", "0", "--max-x", "9999",
		"--check-primary-class", "ssd", "--check-failure-domain", "host")
	wantCheck := "rule 6 (mixed) num_rep 3 primary of class ssd: 10000/10000\n" +
		"rule 6 (mixed) num_rep 3 a copy in the primary's host: 4595/10000\n" +
		"rule 6 (mixed) num_rep 3 two other copies in one host: 0/10000\n"
	if err != nil || stdout != wantCheck {
		t.Fatalf("check: %v\n%s\nwant:\n%s", err, stdout, wantCheck)
	}
	stdout, _, err = run(t, "--format", "json", "crush", "test", "-i", out, "--rule", "6", "--num-rep", "3", "--max-x", "999",
		"--check-primary-class", "ssd")
	var res []struct {
		Check struct {
			Mappings       int `json:"mappings"`
			PrimaryInClass int `json:"primary_in_class"`
		} `json:"check"`
	}
	if err != nil || json.Unmarshal([]byte(stdout), &res) != nil || len(res) != 1 || res[0].Check.Mappings != 1000 ||
		res[0].Check.PrimaryInClass != 1000 {
		t.Fatalf("check as JSON: %v %s", err, stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--primary-class", "nvme", "--replica-class", "hdd"}, "no device of class nvme"},
		{[]string{"--primary-class", "ssd", "--replica-class", "hdd", "--failure-domain", "galaxy"}, "no bucket type galaxy"},
		{[]string{"--replica-class", "hdd"}, "required"},
	} {
		args := append([]string{"crush", "rule", "create-hybrid", "x", "-i", crushvectors.Path(t, "maps/classes.txt"), "-o", out}, tc.args...)
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

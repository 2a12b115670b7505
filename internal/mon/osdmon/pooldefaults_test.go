package osdmon

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// A pool created without a rule gets osd_pool_default_crush_rule (what
// cuttle cluster up sets to a rule with failure domain osd, so that the
// new pools of a one-host cluster can place their copies), by name or id;
// a default naming no rule is refused with the option's name.
func TestPoolCreateDefaultCrushRule(t *testing.T) {
	runSteps(t, newCluster(t), []step{
		{prefix: "osd crush rule create-replicated", args: []string{"name", "replicated_osd", "root", "default", "type", "osd"}, status: "(id 1)"},
		{prefix: "osd pool create", args: []string{"pool", "before"}},
		{prefix: "osd pool get", args: []string{"pool", "before", "var", "crush_rule"}, text: "crush_rule: replicated_rule\n"},
		{prefix: "config set", args: []string{"who", "global", "name", "osd_pool_default_crush_rule", "value", "replicated_osd"}},
		{prefix: "osd pool create", args: []string{"pool", "a"}},
		{prefix: "osd pool get", args: []string{"pool", "a", "var", "crush_rule"}, text: "crush_rule: replicated_osd\n"},
		{prefix: "osd pool create", args: []string{"pool", "b", "rule", "replicated_rule"}},
		{prefix: "osd pool get", args: []string{"pool", "b", "var", "crush_rule"}, text: "crush_rule: replicated_rule\n"},
		{prefix: "config set", args: []string{"who", "global", "name", "osd_pool_default_crush_rule", "value", "1"}},
		{prefix: "osd pool create", args: []string{"pool", "c"}},
		{prefix: "osd pool get", args: []string{"pool", "c", "var", "crush_rule"}, text: "crush_rule: replicated_osd\n"},
		{prefix: "config set", args: []string{"who", "global", "name", "osd_pool_default_crush_rule", "value", "nope"}},
		{prefix: "osd pool create", args: []string{"pool", "d"}, code: moncmd.ENOENT, status: `no crush rule "nope" (the default of osd_pool_default_crush_rule`},
	})
}

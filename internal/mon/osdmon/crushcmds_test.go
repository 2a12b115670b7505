package osdmon

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

func TestCrushCommands(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"buckets and move", []step{
			{prefix: "osd crush add-bucket", args: []string{"name", "r1", "type", "rack"}, status: "added bucket r1 type rack"},
			{prefix: "osd crush add-bucket", args: []string{"name", "r1", "type", "rack"}, status: "already exists"},
			{prefix: "osd crush add-bucket", args: []string{"name", "r1", "type", "row"}, code: moncmd.EEXIST},
			{prefix: "osd crush add-bucket", args: []string{"name", "x", "type", "osd"}, code: moncmd.EINVAL, status: "not a bucket type"},
			{prefix: "osd crush add-bucket", args: []string{"name", "x", "type", "galaxy"}, code: moncmd.EINVAL},
			{prefix: "osd crush add-bucket", args: []string{"name", "a~b", "type", "rack"}, code: moncmd.EINVAL},
			{prefix: "osd crush add-bucket", args: []string{"name", "h0", "type", "host"}, status: "added"},
			{prefix: "osd crush move", args: []string{"name", "h0", "rack", "r1"}, status: "moved item 'h0' to location rack=r1"},
			{prefix: "osd crush move", args: []string{"name", "h0", "rack", "r1"}, status: "already there"},
			{prefix: "osd crush move", args: []string{"name", "r1", "root", "default"}, status: "moved"},
			// Missing buckets of the location are created.
			{prefix: "osd crush add-bucket", args: []string{"name", "h1", "type", "host"}},
			{prefix: "osd crush move", args: []string{"name", "h1", "rack", "r2", "root", "default"}, status: "rack=r2,root=default"},
			{prefix: "osd crush move", args: []string{"name", "h1"}, code: moncmd.EINVAL, status: "no location"},
			{prefix: "osd crush move", args: []string{"name", "h1", "host", "h0"}, code: moncmd.EINVAL, status: "not above"},
			{prefix: "osd crush move", args: []string{"name", "h1", "planet", "p"}, code: moncmd.EINVAL},
			{prefix: "osd crush move", args: []string{"name", "nope", "root", "default"}, code: moncmd.ENOENT},
			{prefix: "osd crush move", args: []string{"name", "h1", "root", "r1"}, code: moncmd.EINVAL, status: "not of type root"},
			{prefix: "osd create"},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h1", "weight", "2"}},
			{prefix: "osd crush move", args: []string{"name", "osd.0", "host", "h0"}, code: moncmd.EINVAL, status: "not a bucket"},
			{prefix: "osd tree", text: "" +
				"ID  CLASS  WEIGHT   TYPE NAME          STATUS  REWEIGHT  PRI-AFF\n" +
				"-1         2.00000  root default\n" +
				"-2         0.00000      rack r1\n" +
				"-3         0.00000          host h0\n" +
				"-5         2.00000      rack r2\n" +
				"-4         2.00000          host h1\n" +
				" 0         2.00000              osd.0      up   1.00000  1.00000\n"},
		}},
		{"reweight and rm", []step{
			{prefix: "osd create"}, {prefix: "osd create"},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0"}},
			{prefix: "osd boot", args: []string{"id", "1", "addr", "a:2", "host", "h0"}},
			{prefix: "osd crush reweight", args: []string{"name", "osd.1", "weight", "3"}, status: "reweighted item id 1 name 'osd.1' to 3.00000"},
			{prefix: "osd crush reweight", args: []string{"name", "osd.1", "weight", "3"}, status: "already has crush weight"},
			{prefix: "osd crush reweight", args: []string{"name", "osd.1"}, code: moncmd.EINVAL, status: `missing "weight"`},
			{prefix: "osd crush reweight", args: []string{"name", "osd.1", "weight", "-2"}, code: moncmd.EINVAL},
			{prefix: "osd crush reweight", args: []string{"name", "osd.9", "weight", "1"}, code: moncmd.ENOENT},
			{prefix: "osd crush rm", args: []string{"name", "h0"}, code: moncmd.EBUSY, status: "not empty"},
			{prefix: "osd crush rm", args: []string{"name", "default"}, code: moncmd.EBUSY, status: "not empty"},
			{prefix: "osd crush rm", args: []string{"name", "osd.0"}, status: "removed item id 0 name 'osd.0'"},
			{prefix: "osd crush rm", args: []string{"name", "osd.0"}, status: "in no bucket"},
			{prefix: "osd crush rm", args: []string{"name", "nothing"}, status: "does not appear"},
			{prefix: "osd tree", text: "" +
				"ID  CLASS  WEIGHT   TYPE NAME      STATUS  REWEIGHT  PRI-AFF\n" +
				"-1         3.00000  root default\n" +
				"-2         3.00000      host h0\n" +
				" 1         3.00000          osd.1      up   1.00000  1.00000\n" +
				" 0         0.00000  osd.0              up   1.00000  1.00000\n"},
			{prefix: "osd crush add-bucket", args: []string{"name", "spare", "type", "root"}},
			{prefix: "osd crush rule create-replicated", args: []string{"name", "spare_rule", "root", "spare", "type", "host"}},
			{prefix: "osd crush rm", args: []string{"name", "spare"}, code: moncmd.EBUSY, status: "taken by rule spare_rule"},
			{prefix: "osd crush rule rm", args: []string{"name", "spare_rule"}, status: "removed rule spare_rule"},
			{prefix: "osd crush rm", args: []string{"name", "spare"}, status: "removed item id -3 name 'spare'"},
		}},
		{"classes and rules", []step{
			{prefix: "osd create"}, {prefix: "osd create"},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0"}},
			{prefix: "osd boot", args: []string{"id", "1", "addr", "a:2", "host", "h1"}},
			{prefix: "osd crush rule create-replicated", args: []string{"name", "fast", "root", "default", "type", "host", "class", "ssd"},
				code: moncmd.ENOENT, status: "device class ssd does not exist"},
			{prefix: "osd crush set-device-class", args: []string{"class", "ssd", "ids", "osd.0,osd.1"}, status: "set class ssd of osd.0, osd.1"},
			{prefix: "osd crush set-device-class", args: []string{"class", "ssd", "ids", "0"}, status: "already has class ssd"},
			{prefix: "osd crush set-device-class", args: []string{"class", "hdd", "ids", "0"}, code: moncmd.EBUSY, status: "remove it first"},
			{prefix: "osd crush set-device-class", args: []string{"class", "hdd", "ids", "7"}, code: moncmd.ENOENT},
			{prefix: "osd crush rule create-replicated", args: []string{"name", "fast", "root", "default", "type", "host", "class", "ssd"}, status: "created rule fast (id 1)"},
			{prefix: "osd crush rule create-replicated", args: []string{"name", "fast", "root", "default", "type", "host"}, status: "already exists"},
			{prefix: "osd crush rule create-replicated", args: []string{"name", "r", "root", "nope", "type", "host"}, code: moncmd.ENOENT},
			{prefix: "osd crush rule create-replicated", args: []string{"name", "r", "root", "default", "type", "galaxy"}, code: moncmd.EINVAL},
			{prefix: "osd crush rule ls", data: `["replicated_rule","fast"]`},
			{prefix: "osd crush rule dump", args: []string{"name", "fast"},
				text: "rule fast {\n\tid 1\n\ttype replicated\n\tstep take default~ssd\n\tstep chooseleaf_firstn 0 type host\n\tstep emit\n}\n",
				data: `{"rule_id":1,"rule_name":"fast","type":"replicated","steps":[{"op":"take","item":-6,"item_name":"default~ssd"},{"op":"chooseleaf_firstn","num":0,"type":"host"},{"op":"emit"}]}`},
			{prefix: "osd crush rule dump", args: []string{"name", "slow"}, code: moncmd.ENOENT},
			{prefix: "osd pool create", args: []string{"pool", "p", "rule", "fast"}},
			{prefix: "osd crush rule rm", args: []string{"name", "fast"}, code: moncmd.EBUSY, status: "in use by pool 'p'"},
			{prefix: "osd crush rm-device-class", args: []string{"ids", "0"}, status: "removed the class of osd.0"},
			{prefix: "osd crush rm-device-class", args: []string{"ids", "1"}, code: moncmd.EBUSY, status: "rule fast takes device class ssd, which would have no devices"},
			{prefix: "osd crush rm-device-class", args: []string{"ids", "5"}, status: "osd.5 has no class"},
		}},
		{"a hybrid rule: SSD primaries, HDD replicas", []step{
			{prefix: "osd create"}, {prefix: "osd create"},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0"}},
			{prefix: "osd boot", args: []string{"id", "1", "addr", "a:2", "host", "h1"}},
			{prefix: "osd crush set-device-class", args: []string{"class", "ssd", "ids", "0"}},
			{prefix: "osd crush rule create-hybrid", args: []string{"name", "mixed", "primary_class", "ssd", "replica_class", "hdd", "type", "host"},
				code: moncmd.ENOENT, status: "device class hdd does not exist"},
			{prefix: "osd crush set-device-class", args: []string{"class", "hdd", "ids", "1"}},
			{prefix: "osd crush rule create-hybrid", args: []string{"name", "mixed", "primary_class", "ssd", "replica_class", "ssd", "type", "host"},
				code: moncmd.EINVAL, status: "use create-replicated"},
			{prefix: "osd crush rule create-hybrid", args: []string{"name", "mixed", "primary_class", "ssd", "replica_class", "hdd", "type", "galaxy"},
				code: moncmd.EINVAL, status: "unknown failure domain type galaxy"},
			{prefix: "osd crush rule create-hybrid", args: []string{"name", "mixed", "primary_class", "ssd", "replica_class", "hdd", "type", "host"},
				status: "created rule mixed (id 1): primary from class ssd, replicas from class hdd, across host"},
			{prefix: "osd crush rule create-hybrid", args: []string{"name", "mixed", "primary_class", "ssd", "replica_class", "hdd", "type", "host"},
				status: "already exists"},
			{prefix: "osd crush rule dump", args: []string{"name", "mixed"},
				text: "rule mixed {\n\tid 1\n\ttype replicated\n\tstep take default~ssd\n\tstep chooseleaf_firstn 1 type host\n\tstep emit\n" +
					"\tstep take default~hdd\n\tstep chooseleaf_firstn -1 type host\n\tstep emit\n}\n"},
			{prefix: "osd pool create", args: []string{"pool", "p", "rule", "mixed", "size", "2"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, newCluster(t), tc.steps) })
	}
}

package osdmon

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

func TestPools(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"create", []step{
			{prefix: "osd pool create", args: []string{"pool", "rbd"}, status: "pool 'rbd' created", data: `{"pool":"rbd","pool_id":1}`},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "all"},
				text: "size: 3\nmin_size: 2\npg_num: 32\npgp_num: 32\ncrush_rule: replicated_rule\n",
				data: `{"crush_rule":"replicated_rule","min_size":2,"pg_num":32,"pgp_num":32,"pool":"rbd","pool_id":1,"size":3}`},
			{prefix: "osd pool create", args: []string{"pool", "rbd"}, status: "already exists"},
			{prefix: "osd pool create", args: []string{"pool", "rbd", "pg_num", "64"}, code: moncmd.EEXIST},
			{prefix: "osd pool create", args: []string{"pool", "odd", "pg_num", "30", "size", "2"}, status: "not a power of two"},
			{prefix: "osd pool get", args: []string{"pool", "odd", "var", "min_size"}, text: "min_size: 1\n"},
			{prefix: "osd pool create", args: []string{"pool", "one", "size", "1", "pg_num", "8", "pgp_num", "4"}},
			{prefix: "osd pool get", args: []string{"pool", "one", "var", "pgp_num"}, text: "pgp_num: 4\n"},
			{prefix: "osd pool ls", text: "rbd\nodd\none\n", data: `["rbd","odd","one"]`},
			{prefix: "osd pool ls", args: []string{"detail", "maybe"}, code: moncmd.EINVAL},
			{prefix: "osd pool ls", args: []string{"detail", "detail"}, data: `[{"pool":1,"pool_name":"rbd","type":"replicated","size":3,"min_size":2,"crush_rule":0,"pg_num":32,"pgp_num":32,"flags_names":"hashpspool","last_change":2},{"pool":2,"pool_name":"odd","type":"replicated","size":2,"min_size":1,"crush_rule":0,"pg_num":30,"pgp_num":30,"flags_names":"hashpspool","last_change":3},{"pool":3,"pool_name":"one","type":"replicated","size":1,"min_size":1,"crush_rule":0,"pg_num":8,"pgp_num":4,"flags_names":"hashpspool","last_change":4}]`},
			{prefix: "osd pool ls", args: []string{"detail", "true"},
				text: "pool 1 'rbd' replicated size 3 min_size 2 crush_rule 0 object_hash rjenkins pg_num 32 pgp_num 32 last_change 2 flags hashpspool\n" +
					"pool 2 'odd' replicated size 2 min_size 1 crush_rule 0 object_hash rjenkins pg_num 30 pgp_num 30 last_change 3 flags hashpspool\n" +
					"pool 3 'one' replicated size 1 min_size 1 crush_rule 0 object_hash rjenkins pg_num 8 pgp_num 4 last_change 4 flags hashpspool\n"},
		}},
		{"create refusals", []step{
			{prefix: "osd pool create", code: moncmd.EINVAL, status: `missing "pool"`},
			{prefix: "osd pool create", args: []string{"pool", "p", "size", "11"}, code: moncmd.EINVAL, status: "size 11 out of [1, 10]"},
			{prefix: "osd pool create", args: []string{"pool", "p", "size", "0"}, code: moncmd.EINVAL, status: "size 0"},
			{prefix: "osd pool create", args: []string{"pool", "p", "size", "2", "min_size", "3"}, code: moncmd.EINVAL, status: "min_size 3 out of [1, size 2]"},
			{prefix: "osd pool create", args: []string{"pool", "p", "pg_num", "0"}, code: moncmd.EINVAL, status: "pg_num 0"},
			{prefix: "osd pool create", args: []string{"pool", "p", "pg_num", "8", "pgp_num", "16"}, code: moncmd.EINVAL, status: "pgp_num 16"},
			{prefix: "osd pool create", args: []string{"pool", "p", "pg_num", "lots"}, code: moncmd.EINVAL, status: "not an integer"},
			{prefix: "osd pool create", args: []string{"pool", "p", "rule", "nope"}, code: moncmd.ENOENT, status: "no crush rule"},
			{prefix: "osd pool create", args: []string{"pool", "p", "pool_type", "erasure"}, code: moncmd.ENOTSUP},
		}},
		{"set", []step{
			{prefix: "osd pool create", args: []string{"pool", "rbd", "pg_num", "16"}},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "size", "val", "2"}, status: "set pool 1 size to 2"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "min_size"}, text: "min_size: 2\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "size", "val", "1"}},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "min_size"}, text: "min_size: 1\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "size", "val", "1"}, status: "already 1"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "min_size", "val", "2"}, code: moncmd.EINVAL, status: "min_size 2 out of [1, size 1]"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num", "val", "32"}, status: "pg_num to 32"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num", "val", "8"}, code: moncmd.EPERM, status: "can only grow"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num", "val", "32"}},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num", "val", "64"}, code: moncmd.EINVAL, status: "pgp_num 64"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num", "val", "-1"}, code: moncmd.EINVAL, status: "not a count"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "crush_rule", "val", "replicated_rule"}, status: "already"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "crush_rule", "val", "nope"}, code: moncmd.EINVAL, status: "no crush rule"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "color", "val", "red"}, code: moncmd.EINVAL, status: "unknown variable"},
			{prefix: "osd pool set", args: []string{"pool", "nope", "var", "size", "val", "2"}, code: moncmd.ENOENT},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "color"}, code: moncmd.EINVAL},
			{prefix: "osd pool get", args: []string{"pool", "nope", "var", "size"}, code: moncmd.ENOENT},
		}},
		{"rename", []step{
			{prefix: "osd pool create", args: []string{"pool", "a"}},
			{prefix: "osd pool create", args: []string{"pool", "b"}},
			{prefix: "osd pool rename", args: []string{"srcpool", "a", "destpool", "b"}, code: moncmd.EEXIST},
			{prefix: "osd pool rename", args: []string{"srcpool", "a", "destpool", "c"}, status: "pool 'a' renamed to 'c'"},
			{prefix: "osd pool rename", args: []string{"srcpool", "a", "destpool", "c"}, status: "does not exist; pool 'c' already exists"},
			{prefix: "osd pool rename", args: []string{"srcpool", "x", "destpool", "y"}, code: moncmd.ENOENT},
			{prefix: "osd pool ls", text: "c\nb\n"},
		}},
		{"rm", []step{
			{prefix: "osd pool create", args: []string{"pool", "a"}},
			{prefix: "osd pool rm", args: []string{"pool", "a"}, code: moncmd.EPERM, status: "pass the pool name *twice*"},
			{prefix: "osd pool rm", args: []string{"pool", "a", "pool2", "a"}, code: moncmd.EPERM, status: "PERMANENTLY DESTROY"},
			{prefix: "osd pool rm", args: []string{"pool", "a", "pool2", "b", "yes_i_really_really_mean_it", "true"}, code: moncmd.EPERM, status: "*twice*"},
			{prefix: "osd pool rm", args: []string{"pool", "a", "pool2", "a", "yes_i_really_really_mean_it", "true"}, code: moncmd.EPERM, status: "mon_allow_pool_delete"},
			{prefix: "config set", args: []string{"who", "mon", "name", "mon_allow_pool_delete", "value", "true"}},
			{prefix: "osd pool rm", args: []string{"pool", "a", "pool2", "a", "yes_i_really_really_mean_it", "true"}, status: "pool 'a' removed"},
			{prefix: "osd pool rm", args: []string{"pool", "a", "pool2", "a", "yes_i_really_really_mean_it", "true"}, status: "does not exist"},
			{prefix: "osd pool ls", data: `[]`},
			{prefix: "osd pool create", args: []string{"pool", "a"}, data: `{"pool":"a","pool_id":2}`}, // ids are not reused
		}},
		{"defaults from config", []step{
			{prefix: "config set", args: []string{"who", "global", "name", "osd_pool_default_size", "value", "2"}},
			{prefix: "config set", args: []string{"who", "global", "name", "osd_pool_default_pg_num", "value", "8"}},
			{prefix: "osd pool create", args: []string{"pool", "a"}},
			{prefix: "osd pool get", args: []string{"pool", "a", "var", "all"}, text: "size: 2\nmin_size: 1\npg_num: 8\npgp_num: 8\ncrush_rule: replicated_rule\n"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, newCluster(t), tc.steps) })
	}
}

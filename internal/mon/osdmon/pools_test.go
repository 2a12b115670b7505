package osdmon

import (
	"strings"
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
				text: "size: 3\nmin_size: 2\npg_num: 32\npgp_num: 32\npg_num_target: 32\npgp_num_target: 32\npg_num_pending: 0\nmerge_status: none\ncrush_rule: replicated_rule\npg_autoscale_mode: warn\ntarget_size_bytes: 0\ntarget_size_ratio: 0\npg_autoscale_bias: 1\nack: all\nread_policy: primary\n",
				data: `{"ack":"all","crush_rule":"replicated_rule","merge_status":"none","min_size":2,"pg_autoscale_bias":1,"pg_autoscale_mode":"warn","pg_num":32,"pg_num_pending":0,"pg_num_target":32,"pgp_num":32,"pgp_num_target":32,"pool":"rbd","pool_id":1,"read_policy":"primary","size":3,"target_size_bytes":0,"target_size_ratio":0}`},
			{prefix: "osd pool create", args: []string{"pool", "rbd"}, status: "already exists"},
			{prefix: "osd pool create", args: []string{"pool", "rbd", "pg_num", "64"}, code: moncmd.EEXIST},
			{prefix: "osd pool create", args: []string{"pool", "odd", "pg_num", "30", "size", "2"}, status: "not a power of two"},
			{prefix: "osd pool get", args: []string{"pool", "odd", "var", "min_size"}, text: "min_size: 1\n"},
			{prefix: "osd pool create", args: []string{"pool", "one", "size", "1", "pg_num", "8", "pgp_num", "4"}, code: moncmd.EPERM,
				status: "pool 'one': size 1 keeps a single copy of every object: losing that one OSD or its disk loses the data; if that is what you want, pass --yes-i-really-mean-it"},
			{prefix: "osd pool create", args: []string{"pool", "one", "size", "1", "pg_num", "8", "pgp_num", "4", "yes_i_really_mean_it", "maybe"}, code: moncmd.EINVAL},
			{prefix: "osd pool create", args: []string{"pool", "one", "size", "1", "pg_num", "8", "pgp_num", "4", "yes_i_really_mean_it", "true"}},
			{prefix: "osd pool get", args: []string{"pool", "one", "var", "pgp_num"}, text: "pgp_num: 4\n"},
			{prefix: "osd pool ls", text: "rbd\nodd\none\n", data: `["rbd","odd","one"]`},
			{prefix: "osd pool ls", args: []string{"detail", "maybe"}, code: moncmd.EINVAL},
			{prefix: "osd pool ls", args: []string{"detail", "detail"}, data: `[{"pool":1,"pool_name":"rbd","type":"replicated","size":3,"min_size":2,"crush_rule":0,"pg_num":32,"pgp_num":32,"pg_num_target":32,"pgp_num_target":32,"flags_names":"hashpspool","last_change":2,"pg_autoscale_mode":"warn","ack":"all","read_policy":"primary"},{"pool":2,"pool_name":"odd","type":"replicated","size":2,"min_size":1,"crush_rule":0,"pg_num":30,"pgp_num":30,"pg_num_target":30,"pgp_num_target":30,"flags_names":"hashpspool","last_change":3,"pg_autoscale_mode":"warn","ack":"all","read_policy":"primary"},{"pool":3,"pool_name":"one","type":"replicated","size":1,"min_size":1,"crush_rule":0,"pg_num":8,"pgp_num":4,"pg_num_target":8,"pgp_num_target":4,"flags_names":"hashpspool","last_change":4,"pg_autoscale_mode":"warn","ack":"all","read_policy":"primary"}]`},
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
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "size", "val", "1"}, code: moncmd.EPERM, status: "size 1 keeps a single copy"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "size"}, text: "size: 2\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "size", "val", "1", "yes_i_really_mean_it", "true"}},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "min_size"}, text: "min_size: 1\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "size", "val", "1"}, status: "already 1"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "min_size", "val", "2"}, code: moncmd.EINVAL, status: "min_size 2 out of [1, size 1]"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "size", "val", "2"}, status: "set pool 1 size to 2"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num", "val", "-1"}, code: moncmd.EINVAL, status: "not a count"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "crush_rule", "val", "replicated_rule"}, status: "already"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "crush_rule", "val", "nope"}, code: moncmd.EINVAL, status: "no crush rule"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "color", "val", "red"}, code: moncmd.EINVAL, status: "unknown variable"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "ack"}, text: "ack: all\n", data: `{"ack":"all","pool":"rbd","pool_id":1}`},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "ack", "val", "some"}, code: moncmd.EINVAL, status: `ack: "some" is not all or primary`},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "ack", "val", "primary"}, code: moncmd.EPERM, status: "survives only on the primary's disk"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "ack"}, text: "ack: all\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "ack", "val", "primary", "yes_i_really_mean_it", "true"}, status: "set pool 1 ack to primary"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "ack"}, text: "ack: primary\n"},
			{prefix: "osd pool ls", args: []string{"detail", "true"}, text: "pool 1 'rbd' replicated size 2 min_size 1 crush_rule 0 object_hash rjenkins pg_num 16 pgp_num 16 last_change 6 flags hashpspool ack primary\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "ack", "val", "primary"}, status: "already primary"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "ack", "val", "all"}, status: "set pool 1 ack to all"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "read_policy"}, text: "read_policy: primary\n", data: `{"pool":"rbd","pool_id":1,"read_policy":"primary"}`},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "read_policy", "val", "nearest"}, code: moncmd.EINVAL, status: `read_policy: "nearest" is not primary, balance or score`},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "read_policy", "val", "score"}, status: "set pool 1 read_policy to score"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "read_policy"}, text: "read_policy: score\n"},
			{prefix: "osd pool ls", args: []string{"detail", "true"}, text: "pool 1 'rbd' replicated size 2 min_size 1 crush_rule 0 object_hash rjenkins pg_num 16 pgp_num 16 last_change 8 flags hashpspool read_policy score\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "read_policy", "val", "score"}, status: "already score"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "read_policy", "val", "primary"}, status: "set pool 1 read_policy to primary"},
			{prefix: "osd pool set", args: []string{"pool", "nope", "var", "size", "val", "2"}, code: moncmd.ENOENT},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "color"}, code: moncmd.EINVAL},
			{prefix: "osd pool get", args: []string{"pool", "nope", "var", "size"}, code: moncmd.ENOENT},
		}},
		{"pg_num grows, pgp_num follows", []step{
			{prefix: "osd pool create", args: []string{"pool", "rbd", "pg_num", "8"}},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num", "val", "32"},
				status: "set pool 1 pg_num to 32; the OSDs split its 8 PGs into 32, placed with their parents until pgp_num (8) is raised " +
					"(cuttle osd pool set rbd pgp_num 32)"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "all"}, text: "size: 3\nmin_size: 2\npg_num: 32\npgp_num: 8\npg_num_target: 32\npgp_num_target: 8\npg_num_pending: 0\nmerge_status: none\ncrush_rule: replicated_rule\npg_autoscale_mode: warn\ntarget_size_bytes: 0\ntarget_size_ratio: 0\npg_autoscale_bias: 1\nack: all\nread_policy: primary\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num", "val", "64"}, code: moncmd.EINVAL,
				status: "pool 'rbd': pgp_num 64 is above pg_num 32; raise pg_num first (cuttle osd pool set rbd pg_num 64)"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num", "val", "16"},
				status: "set pool 1 pgp_num to 16; pgp_num_target is 16: the monitors step pgp_num (now 8) toward it"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "pgp_num_target"}, text: "pgp_num_target: 16\n"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "pgp_num"}, text: "pgp_num: 8\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num_actual", "val", "64"}, code: moncmd.EINVAL,
				status: "pool 'rbd': pgp_num_actual 64 is above pg_num 32"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num_actual", "val", "12"},
				status: "set pool 1 pgp_num_actual to 12; PGs move to their new placement through backfill"},
			{prefix: "osd pool ls", args: []string{"detail", "detail"},
				text: "pool 1 'rbd' replicated size 3 min_size 2 crush_rule 0 object_hash rjenkins pg_num 32 pgp_num 12 last_change 5 flags hashpspool pgp_num_target 16\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num_actual", "val", "16"}},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "pgp_num_target"}, text: "pgp_num_target: 16\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num", "val", "32"}},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num_actual", "val", "32"}},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num", "val", "0"}, code: moncmd.EINVAL, status: "pgp_num must be at least 1, not 0"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num", "val", "0"}, code: moncmd.EINVAL, status: "pg_num must be at least 1, not 0"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num", "val", "16"},
				status: "set pool 1 pg_num to 16; the monitors merge its 32 PGs into 16: pgp_num steps down to 16 first"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "merge_status"},
				text: "merge_status: waiting for pgp_num 32 to step down to 16 (pgp_num_target 16) while under target_max_misplaced_ratio of the data moves\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num", "val", "32"}, code: moncmd.EINVAL,
				status: "pool 'rbd': pgp_num 32 is above pg_num_target 16: the PGs are merging down to 16"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num_actual", "val", "16"}, code: moncmd.EBUSY,
				status: "pool 'rbd': pg_num_actual 16 is not the merge's next step (waiting for pgp_num 32"},
			// Back to the current pg_num: the merge is off.
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num", "val", "32"}, status: "set pool 1 pg_num to 32"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "merge_status"}, text: "merge_status: none\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pgp_num", "val", "32"}},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num", "val", "65537"}, code: moncmd.EINVAL,
				status: "pg_num 65537 is above the limit of 65536 PGs per pool"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num", "val", "32"}, status: "pool 'rbd' pg_num is already 32"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num", "val", "48"}, status: "set pool 1 pg_num to 48"},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "all"}, text: "size: 3\nmin_size: 2\npg_num: 48\npgp_num: 32\npg_num_target: 48\npgp_num_target: 32\npg_num_pending: 0\nmerge_status: none\ncrush_rule: replicated_rule\npg_autoscale_mode: warn\ntarget_size_bytes: 0\ntarget_size_ratio: 0\npg_autoscale_bias: 1\nack: all\nread_policy: primary\n"},
			// mon_max_pg_per_osd (250) × 3 OSDs counted: 250 PGs of size 3.
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_num", "val", "256"}, code: moncmd.ERANGE, status: "pg_num 256 × size 3"},
		}},
		{"min_size below a majority needs the flag", []step{
			{prefix: "osd pool create", args: []string{"pool", "p", "size", "3", "min_size", "1"}, code: moncmd.EPERM,
				status: "pool 'p': min_size 1 with size 3 lets the pool acknowledge writes held by 1 of 3 copies: " +
					"if those fail before recovery, acknowledged writes are lost (a majority, min_size 2, is the safe least); " +
					"if that is what you want, pass --yes-i-really-mean-it"},
			{prefix: "osd pool create", args: []string{"pool", "p", "size", "2", "min_size", "1"}},
			{prefix: "osd pool create", args: []string{"pool", "q", "size", "3"}},
			{prefix: "osd pool set", args: []string{"pool", "q", "var", "min_size", "val", "1"}, code: moncmd.EPERM, status: "pool 'q': min_size 1 with size 3"},
			{prefix: "osd pool get", args: []string{"pool", "q", "var", "min_size"}, text: "min_size: 2\n"},
			{prefix: "osd pool set", args: []string{"pool", "q", "var", "min_size", "val", "1", "yes_i_really_mean_it", "true"}, status: "set pool 2 min_size to 1"},
			{prefix: "osd pool set", args: []string{"pool", "q", "var", "min_size", "val", "2"}},
			{prefix: "osd pool set", args: []string{"pool", "q", "var", "size", "val", "4"}}, // 2 of 4 is half: the default rule
			{prefix: "osd pool set", args: []string{"pool", "q", "var", "size", "val", "5"}, code: moncmd.EPERM, status: "min_size 2 with size 5"},
			{prefix: "osd pool create", args: []string{"pool", "r", "size", "3", "min_size", "1", "yes_i_really_mean_it", "true"}},
			{prefix: "osd pool get", args: []string{"pool", "r", "var", "min_size"}, text: "min_size: 1\n"},
		}},
		{"mon_max_pg_per_osd", []step{
			// No OSDs: three are counted, so 750 PG copies fit.
			{prefix: "osd pool create", args: []string{"pool", "pbig", "pg_num", "65536"}, code: moncmd.ERANGE,
				status: "pool 'pbig': pg_num 65536 × size 3 would bring the cluster to 196608 PG copies, " +
					"above the limit of 750 (mon_max_pg_per_osd 250 × 3 in OSDs, at least 3 counted); " +
					"use fewer PGs, add OSDs, or raise the limit (cuttle config set mon mon_max_pg_per_osd N)"},
			{prefix: "osd pool create", args: []string{"pool", "a", "pg_num", "128"}}, // 384
			{prefix: "osd pool create", args: []string{"pool", "b", "pg_num", "128"}, code: moncmd.ERANGE, status: "768 PG copies"},
			{prefix: "osd pool create", args: []string{"pool", "b", "pg_num", "122"}}, // 750: at the limit
			{prefix: "osd pool create", args: []string{"pool", "c", "pg_num", "1", "size", "1", "yes_i_really_mean_it", "true"}, code: moncmd.ERANGE, status: "751 PG copies"},
			{prefix: "osd pool set", args: []string{"pool", "a", "var", "size", "val", "4"}, code: moncmd.ERANGE, status: "pool 'a': pg_num 128 × size 4 would bring the cluster to 878"},
			{prefix: "osd pool set", args: []string{"pool", "a", "var", "size", "val", "2"}}, // lowering is always allowed
			{prefix: "osd pool set", args: []string{"pool", "a", "var", "size", "val", "3"}},
			{prefix: "config set", args: []string{"who", "mon", "name", "mon_max_pg_per_osd", "value", "300"}},
			{prefix: "osd pool create", args: []string{"pool", "c", "pg_num", "32"}},
			{prefix: "osd pool ls", text: "a\nb\nc\n"},
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
			{prefix: "config set", args: []string{"who", "global", "name", "osd_pool_default_pg_autoscale_mode", "value", "on"}},
			{prefix: "osd pool create", args: []string{"pool", "a"}},
			{prefix: "osd pool get", args: []string{"pool", "a", "var", "all"}, text: "size: 2\nmin_size: 1\npg_num: 8\npgp_num: 8\npg_num_target: 8\npgp_num_target: 8\npg_num_pending: 0\nmerge_status: none\ncrush_rule: replicated_rule\npg_autoscale_mode: on\ntarget_size_bytes: 0\ntarget_size_ratio: 0\npg_autoscale_bias: 1\nack: all\nread_policy: primary\n"},
			{prefix: "osd pool create", args: []string{"pool", "b", "autoscale_mode", "off"}},
			{prefix: "osd pool get", args: []string{"pool", "b", "var", "pg_autoscale_mode"}, text: "pg_autoscale_mode: off\n"},
			{prefix: "osd pool create", args: []string{"pool", "c", "autoscale_mode", "auto"}, code: moncmd.EINVAL, status: "not on, warn or off"},
			{prefix: "config set", args: []string{"who", "global", "name", "osd_pool_default_pg_autoscale_mode", "value", "sometimes"}},
			{prefix: "osd pool create", args: []string{"pool", "c"}, code: moncmd.EINVAL, status: "not on, warn or off"},
		}},
		{"autoscaler options", []step{
			{prefix: "osd pool create", args: []string{"pool", "rbd"}},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_autoscale_mode", "val", "on"},
				status: "set pool 1 pg_autoscale_mode to on; the monitors' leader now raises pg_num"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_autoscale_mode", "val", "on"}, status: "already on"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_autoscale_mode", "val", "maybe"}, code: moncmd.EINVAL,
				status: `osd pool set: pg_autoscale_mode: "maybe" is not on, warn or off`},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "target_size_bytes", "val", "1099511627776"}},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "target_size_bytes", "val", "1T"}, code: moncmd.EINVAL},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "target_size_ratio", "val", "0.2"}},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "target_size_ratio", "val", "-1"}, code: moncmd.EINVAL},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "target_size_ratio", "val", "NaN"}, code: moncmd.EINVAL},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_autoscale_bias", "val", "4"}},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_autoscale_bias", "val", "0"}, code: moncmd.EINVAL},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_autoscale_bias", "val", "1001"}, code: moncmd.EINVAL},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "all"},
				text: "size: 3\nmin_size: 2\npg_num: 32\npgp_num: 32\npg_num_target: 32\npgp_num_target: 32\npg_num_pending: 0\nmerge_status: none\ncrush_rule: replicated_rule\n" +
					"pg_autoscale_mode: on\ntarget_size_bytes: 1099511627776\ntarget_size_ratio: 0.2\npg_autoscale_bias: 4\nack: all\nread_policy: primary\n"},
			{prefix: "osd pool ls", args: []string{"detail", "true"},
				text: "pool 1 'rbd' replicated size 3 min_size 2 crush_rule 0 object_hash rjenkins pg_num 32 pgp_num 32 last_change 6 flags hashpspool " +
					"autoscale_mode on target_size_bytes 1099511627776 target_size_ratio 0.2 pg_autoscale_bias 4\n"},
			{prefix: "osd pool set", args: []string{"pool", "rbd", "var", "pg_autoscale_bias", "val", "1"}},
			{prefix: "osd pool get", args: []string{"pool", "rbd", "var", "pg_autoscale_bias"}, data: `{"pg_autoscale_bias":1,"pool":"rbd","pool_id":1}`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, newCluster(t), tc.steps) })
	}
}

// mon_max_pg_per_osd counts the OSDs that are in: six in OSDs take twice
// the PG copies three do, and an OSD marked out stops counting.
func TestPGLimitCountsInOSDs(t *testing.T) {
	m := newBootedCluster(t, 6, 1)
	runSteps(t, m, []step{
		{prefix: "osd pool create", args: []string{"pool", "a", "pg_num", "500"}}, // 1500 of 6 × 250
		{prefix: "osd pool create", args: []string{"pool", "b", "pg_num", "1"}, code: moncmd.ERANGE, status: "1503 PG copies, above the limit of 1500 (mon_max_pg_per_osd 250 × 6 in OSDs"},
		{prefix: "osd out", args: []string{"ids", "5"}},
		{prefix: "osd pool set", args: []string{"pool", "a", "var", "size", "val", "4"}, code: moncmd.ERANGE, status: "above the limit of 1250 (mon_max_pg_per_osd 250 × 5 in OSDs"},
	})
}

// A pool whose rule spreads copies over hosts, on a cluster of one host,
// is created with a warning that says how many copies fit, why, and what
// to do; a rule over OSDs then places them all, and no warning is given.
func TestPoolPlacementWarning(t *testing.T) {
	oneHost := newBootedCluster(t, 3, 3)
	runSteps(t, oneHost, []step{
		{prefix: "osd pool create", args: []string{"pool", "p", "pg_num", "16"},
			status: "pool 'p' created (warning: crush rule replicated_rule can place only 1 of 3 copies: " +
				"its failure domain is host, and default holds OSDs in 1 host; PGs stay undersized until it holds OSDs in 3 hosts, " +
				"or use a rule that places copies on OSDs (cuttle osd crush rule create-replicated NAME default osd, " +
				"then cuttle osd pool set p crush_rule NAME), or lower size)",
			data: `{"pool":"p","pool_id":1,"warnings":["warning: crush rule replicated_rule can place only 1 of 3 copies: ` +
				`its failure domain is host, and default holds OSDs in 1 host; PGs stay undersized until it holds OSDs in 3 hosts, ` +
				`or use a rule that places copies on OSDs (cuttle osd crush rule create-replicated NAME default osd, ` +
				`then cuttle osd pool set p crush_rule NAME), or lower size"]}`},
		{prefix: "osd crush rule create-replicated", args: []string{"name", "by_osd", "root", "default", "type", "osd"}},
		{prefix: "osd pool set", args: []string{"pool", "p", "var", "crush_rule", "val", "by_osd"}},
		{prefix: "osd pool set", args: []string{"pool", "p", "var", "size", "val", "4"},
			status: "set pool 1 size to 4 (warning: crush rule by_osd can place only 3 of 4 copies: its failure domain is osd, and default holds OSDs in 3 osds; " +
				"PGs stay undersized until it holds OSDs in 4 osds, or lower size)"},
		{prefix: "osd pool set", args: []string{"pool", "p", "var", "size", "val", "3"}},
		{prefix: "osd pool set", args: []string{"pool", "p", "var", "crush_rule", "val", "replicated_rule"},
			status: "can place only 1 of 3 copies: its failure domain is host, and default holds OSDs in 1 host; PGs stay undersized until it holds OSDs in 3 hosts, " +
				"or use rule by_osd, which places copies on OSDs (cuttle osd pool set p crush_rule by_osd), or lower size)"},
		{prefix: "osd crush set-device-class", args: []string{"class", "hdd", "ids", "0"}},
		{prefix: "osd crush rule create-replicated", args: []string{"name", "hdd_hosts", "root", "default", "type", "host", "class", "hdd"}},
		{prefix: "osd pool create", args: []string{"pool", "h", "pg_num", "8", "rule", "hdd_hosts"},
			status: "crush rule hdd_hosts can place only 1 of 3 copies: its failure domain is host, and default~hdd holds OSDs in 1 host; " +
				"PGs stay undersized until it holds OSDs in 3 hosts, or use a rule that places copies on OSDs " +
				"(cuttle osd crush rule create-replicated NAME default osd hdd, then cuttle osd pool set h crush_rule NAME), or lower size)"},
	})
	if r := must(t, oneHost.run("osd pool create", "pool", "two", "pg_num", "8", "size", "2", "rule", "by_osd")); r.Status != "pool 'two' created" {
		t.Errorf("one host, a rule over OSDs: %q", r.Status)
	}
	threeHosts := newBootedCluster(t, 3, 1)
	if r := must(t, threeHosts.run("osd pool create", "pool", "p", "pg_num", "32")); r.Status != "pool 'p' created" {
		t.Errorf("three hosts, size 3: %q", r.Status)
	}
	// Down and out OSDs still count: the warning is about the hierarchy.
	must(t, threeHosts.run("osd down", "ids", "2"))
	must(t, threeHosts.run("osd out", "ids", "2"))
	if r := must(t, threeHosts.run("osd pool create", "pool", "q", "pg_num", "32")); r.Status != "pool 'q' created" {
		t.Errorf("three hosts, one down and out: %q", r.Status)
	}
	if r := must(t, threeHosts.run("osd pool create", "pool", "r", "pg_num", "32", "size", "4", "min_size", "3")); !strings.Contains(r.Status, "can place only 3 of 4 copies: its failure domain is host, and default holds OSDs in 3 hosts") {
		t.Errorf("three hosts, size 4: %q", r.Status)
	}
	// A cluster being set up, with no OSDs yet, gets no warning.
	if r := must(t, newCluster(t).run("osd pool create", "pool", "p")); r.Status != "pool 'p' created" {
		t.Errorf("no OSDs: %q", r.Status)
	}
}

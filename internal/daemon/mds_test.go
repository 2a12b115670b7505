package daemon

import (
	"errors"
	"testing"

	"github.com/cuttlestore/cuttle/internal/config"
)

// The MDS's options come from the highest source that sets them:
// Overrides over Flags over the file's sections over the central config
// over the defaults. A central value the schema refuses is skipped.
func TestMDSOptions(t *testing.T) {
	file, err := config.Parse([]byte("[global]\nmds_beacon_interval = 2s\n[mds]\nmds_reconnect_timeout = 20s\n[mds.b]\nmds_cache_size = 500\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := MDSConfig{File: file, Flags: map[string]string{"mds_op_complaint_time": "40s"}}
	local := mdsLocalLayers(cfg, "mds.a")
	central := map[string]string{"mds_cache_size": "12345", "mds_op_complaint_time": "5s", "mds_reconnect_timeout": "3s",
		"mds_beacon_interval": "forever"}
	v, err := mdsOptions(local, central)
	if !errors.Is(err, config.ErrBadValue) {
		t.Errorf("a refused central value: %v, want %v", err, config.ErrBadValue)
	}
	want := map[string]struct {
		value  string
		source config.Source
	}{
		"mds_cache_size":        {"12345", config.SourceMon},
		"mds_op_complaint_time": {"40s", config.SourceFlag},
		"mds_reconnect_timeout": {"20s", config.SourceFile},
		"mds_beacon_interval":   {"2s", config.SourceFile},
	}
	for _, got := range v.All() {
		if w := want[got.Name]; got.Value != w.value || got.Source != w.source {
			t.Errorf("%s = %s from %s, want %s from %s", got.Name, got.Value, got.Source, w.value, w.source)
		}
	}
	if len(v.All()) != len(want) {
		t.Errorf("%d options resolved, want %d", len(v.All()), len(want))
	}

	// Without the central config, the defaults stand below the locals.
	v, err = mdsOptions(mdsLocalLayers(MDSConfig{}, "mds.a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := v.Get("mds_cache_size"); c.Value != "100000" || c.Source != config.SourceDefault {
		t.Errorf("mds_cache_size without any source: %+v", c)
	}
	if _, err := mdsOptions(mdsLocalLayers(MDSConfig{Flags: map[string]string{"mds_cache_size": "many"}}, "mds.a"), nil); !errors.Is(err, config.ErrBadValue) {
		t.Errorf("a bad flag value: %v", err)
	}
}

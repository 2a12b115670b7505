package config

import (
	"errors"
	"testing"
	"time"
)

// TestResolvePrecedence checks the order of sources: default, then the
// central config, then the file, then a flag, whatever order the layers
// are given in.
func TestResolvePrecedence(t *testing.T) {
	names := []string{"osd_max_backfills", "osd_recovery_max_active", "osd_heartbeat_interval", "osd_recovery_sleep"}
	mon := Layer{Source: SourceMon, Values: map[string]string{
		"osd_max_backfills": "2", "osd_recovery_max_active": "5", "osd_heartbeat_interval": "3",
		"mon_allow_pool_delete": "true", // not asked for: ignored
	}}
	file := Layer{Source: SourceFile, Values: map[string]string{"osd_max_backfills": "3", "osd_recovery_max_active": "6"}}
	flag := Layer{Source: SourceFlag, Values: map[string]string{"osd_max_backfills": "4"}}
	for _, order := range [][]Layer{{mon, file, flag}, {flag, file, mon}, {file, flag, mon}} {
		v, err := Resolve(names, order...)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []Value{
			{"osd_max_backfills", "4", SourceFlag},
			{"osd_recovery_max_active", "6", SourceFile},
			{"osd_heartbeat_interval", "3s", SourceMon}, // canonical form
			{"osd_recovery_sleep", "0s", SourceDefault},
		} {
			if got, ok := v.Get(want.Name); !ok || got != want {
				t.Errorf("%s: %+v, want %+v", want.Name, got, want)
			}
		}
		if _, ok := v.Get("mon_allow_pool_delete"); ok {
			t.Error("an option not asked for was resolved")
		}
		if v.Int("osd_max_backfills") != 4 || v.Duration("osd_heartbeat_interval") != 3*time.Second {
			t.Errorf("typed: %d %v", v.Int("osd_max_backfills"), v.Duration("osd_heartbeat_interval"))
		}
	}
}

// TestResolveBadValues checks that a value the schema refuses is skipped
// (the source below it applies) and reported.
func TestResolveBadValues(t *testing.T) {
	names := []string{"osd_max_backfills", "osd_heartbeat_interval"}
	v, err := Resolve(names,
		Layer{Source: SourceMon, Values: map[string]string{"osd_max_backfills": "2", "osd_heartbeat_interval": "2m"}}, // above 60 s
		Layer{Source: SourceFlag, Values: map[string]string{"osd_max_backfills": "lots"}})
	if !errors.Is(err, ErrBadValue) {
		t.Fatalf("err %v, want ErrBadValue", err)
	}
	if got, _ := v.Get("osd_max_backfills"); got.Value != "2" || got.Source != SourceMon {
		t.Errorf("osd_max_backfills: %+v, want 2 from mon", got)
	}
	if got, _ := v.Get("osd_heartbeat_interval"); got.Value != "6s" || got.Source != SourceDefault {
		t.Errorf("osd_heartbeat_interval: %+v, want the default", got)
	}
	if _, err := Resolve([]string{"no_such_option"}); err == nil || errors.Is(err, ErrBadValue) {
		t.Errorf("unknown name: %v", err)
	}
}

func TestFileLayer(t *testing.T) {
	f, err := Parse([]byte("[global]\nosd max backfills = 2\n[osd]\nosd-recovery-max-active = 5\n[osd.3]\nosd_max_backfills = 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"osd_max_backfills", "osd_recovery_max_active", "osd_recovery_sleep"}
	l := FileLayer(f, "osd.3", names)
	if l.Source != SourceFile || len(l.Values) != 2 || l.Values["osd_max_backfills"] != "7" || l.Values["osd_recovery_max_active"] != "5" {
		t.Errorf("osd.3: %+v", l)
	}
	if l := FileLayer(f, "osd.1", names); l.Values["osd_max_backfills"] != "2" {
		t.Errorf("osd.1: %+v", l)
	}
	if l := FileLayer(nil, "osd.1", names); len(l.Values) != 0 {
		t.Errorf("no file: %+v", l)
	}
}

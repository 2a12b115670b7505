package pebblelog

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestRecover(t *testing.T) {
	l := Logger{Log: slog.New(slog.DiscardHandler), Prefix: "test"}
	err := Recover(func() error { l.Fatalf("disk %s", "gone"); return nil })
	var fe *FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "test: pebble fatal: disk gone") {
		t.Fatalf("Recover: %v", err)
	}
	if err := Recover(func() error { return errors.New("plain") }); err == nil || err.Error() != "plain" {
		t.Fatalf("plain error: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a foreign panic was swallowed")
		}
	}()
	_ = Recover(func() error { panic("other") })
}

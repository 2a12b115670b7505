package daemoncmd

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/launcher"
)

// An OSD counts as up only at its own address.
func TestOSDsUp(t *testing.T) {
	osds := []launcher.Daemon{{Kind: launcher.KindOSD, ID: "0", Addr: "127.0.0.1:7501"}, {Kind: launcher.KindOSD, ID: "1", Addr: "127.0.0.1:7502"}}
	dump := func(osds string) []byte { return []byte(`{"epoch":9,"osds":[` + osds + `]}`) }
	if err := osdsUp(dump(`{"osd":0,"up":true,"addr":"127.0.0.1:7501"},{"osd":1,"up":true,"addr":"127.0.0.1:7502"}`), osds); err != nil {
		t.Errorf("all up: %v", err)
	}
	err := osdsUp(dump(`{"osd":0,"up":true,"addr":"127.0.0.1:9999"},{"osd":1,"up":false,"addr":"127.0.0.1:7502"}`), osds)
	if err == nil || !strings.Contains(err.Error(), "osd.0, osd.1 not up") {
		t.Errorf("one elsewhere, one down: %v", err)
	}
	if err := osdsUp([]byte("x"), osds); err == nil {
		t.Error("a reply that is not JSON")
	}
}

// A daemon's uuid is a well-formed UUID, the same for the same cluster
// and name, different otherwise.
func TestNameUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a := nameUUID("fsid", "osd.0")
	if !re.MatchString(a) || a != nameUUID("fsid", "osd.0") || a == nameUUID("fsid", "osd.1") || a == nameUUID("other", "osd.0") {
		t.Errorf("nameUUID: %s", a)
	}
}

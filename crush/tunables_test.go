package crush

import "testing"

func TestProfiles(t *testing.T) {
	for _, name := range ProfileNames() {
		tun, err := Profile(name)
		if err != nil {
			t.Fatal(err)
		}
		got := tun.ProfileName()
		switch name {
		case "legacy":
			name = "argonaut"
		case "optimal", "default":
			name = "jewel"
		}
		if got != name {
			t.Errorf("Profile(%s).ProfileName() = %s", name, got)
		}
	}
	if _, err := Profile("reef"); err == nil {
		t.Error("unknown profile accepted")
	}
	if LegacyTunables().ChooseTotalTries != 19 || DefaultTunables().ChooseleafStable != 1 {
		t.Error("legacy or default tunables wrong")
	}
}

package auth

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sampleKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

func TestParseKeyring(t *testing.T) {
	text := `# the admin
[client.admin]
	key = ` + sampleKey + `
	caps mon = "allow *"
	caps osd = allow rw pool=rbd
; another
[osd.3]
key=` + sampleKey + `
caps mon = "allow command \"osd boot\""
`
	k, err := ParseKeyring([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	admin := k[name(t, "client.admin")]
	if admin.Key[1] != 1 || admin.Key[31] != 31 {
		t.Errorf("key decoded wrong")
	}
	if want := (Caps{"mon": "allow *", "osd": "allow rw pool=rbd"}); !reflect.DeepEqual(admin.Caps, want) {
		t.Errorf("caps = %v, want %v", admin.Caps, want)
	}
	if got := k[name(t, "osd.3")].Caps["mon"]; got != `allow command "osd boot"` {
		t.Errorf("osd.3 caps = %q", got)
	}

	out, err := k.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := "[client.admin]\n\tkey = " + sampleKey + "\n\tcaps mon = \"allow *\"\n\tcaps osd = \"allow rw pool=rbd\"\n" +
		"[osd.3]\n\tkey = " + sampleKey + "\n\tcaps mon = \"allow command \\\"osd boot\\\"\"\n"
	if string(out) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", out, want)
	}
	k2, err := ParseKeyring(out)
	if err != nil || !reflect.DeepEqual(k, k2) {
		t.Errorf("round trip: %v, %v", k2, err)
	}

	secret, caps, err := k.Secret(name(t, "osd.3"))
	if err != nil || secret != admin.Key || caps["mon"] == "" {
		t.Errorf("Secret(osd.3) = %v, %v", caps, err)
	}
	if _, _, err := k.Secret(name(t, "osd.4")); !errors.Is(err, ErrUnknownEntity) {
		t.Errorf("Secret(osd.4): %v", err)
	}
}

func TestParseKeyringErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"key = " + sampleKey, "line 1: setting \"key = "},
		{"[client.a]\n", "line 1: client.a has no key"},
		{"[client.a]\nkey = " + sampleKey + "\n[client.b]\n[client.c]\nkey = " + sampleKey, "line 4: section at line 3: client.b has no key"},
		{"[client.a\n", "line 1: section header"},
		{"[bogus.a]\n", "line 1: auth: bad entity name"},
		{"[client.a]\nkey = no!pe", "line 2: auth: secret is not base64"},
		{"[client.a]\nkey = AAAA", "line 2: auth: secret is 3 bytes"},
		{"[client.a]\nkey = " + sampleKey + "\nkey = " + sampleKey, "line 3: second key"},
		{"[client.a]\nkey = " + sampleKey + "\ncaps osd = allow z", "line 3: auth: bad capabilities"},
		{"[client.a]\nkey = " + sampleKey + "\ncaps osd = allow r\ncaps osd = allow w", "line 4: second caps osd"},
		{"[client.a]\nkey = " + sampleKey + "\nauid = 0", "line 3: unknown setting \"auid\""},
		{"[client.a]\nkey = " + sampleKey + "\njunk", "line 3: want NAME = VALUE"},
		{"[client.a]\nkey = " + sampleKey + "\ncaps mon = \"allow r\" x", "line 3: text \"x\" after"},
		{"[client.a]\nkey = " + sampleKey + "\n[client.a]\nkey = " + sampleKey, "line 3: second section for client.a"},
		{strings.Repeat("#", MaxKeyringSize+1), "limit"},
	} {
		_, err := ParseKeyring([]byte(tc.text))
		if !errors.Is(err, ErrBadKeyring) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseKeyring(%q) = %v, want ErrBadKeyring containing %q", truncate([]byte(tc.text)), err, tc.want)
		}
	}
}

func TestMarshalRefusesUnwritable(t *testing.T) {
	for _, k := range []Keyring{
		{EntityName{"client", "a\nb"}: {Key: NewSecret()}},
		{EntityName{"client", " a"}: {Key: NewSecret()}},
		{EntityName{"nope", "a"}: {Key: NewSecret()}},
		{EntityName{"client", "a"}: {}},
		{EntityName{"client", "a"}: {Key: NewSecret(), Caps: Caps{"osd": "allow z"}}},
	} {
		if _, err := k.Marshal(); !errors.Is(err, ErrBadKeyring) {
			t.Errorf("Marshal(%v) = %v", k, err)
		}
	}
}

func TestSaveLoadKeyring(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ceph.keyring")
	k := Keyring{name(t, "client.admin"): {Key: NewSecret(), Caps: Caps{"mon": "allow *"}}}
	if err := SaveKeyring(path, k); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved keyring: %v, %v", fi.Mode(), err)
	}
	got, err := LoadKeyring(path)
	if err != nil || !reflect.DeepEqual(got, k) {
		t.Fatalf("LoadKeyring = %v, %v", got, err)
	}
	// Overwrite in place; no temporary file is left behind.
	k[name(t, "osd.1")] = KeyEntry{Key: NewSecret()}
	if err := SaveKeyring(path, k); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d files after save", len(ents))
	}
	if got, err := LoadKeyring(path); err != nil || len(got) != 2 {
		t.Fatalf("reload: %v, %v", got, err)
	}

	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeyring(path); !errors.Is(err, ErrInsecureKeyring) || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("LoadKeyring of a 0640 file: %v", err)
	}
	if _, err := LoadKeyring(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadKeyring of a missing file: %v", err)
	}
	if err := SaveKeyring(filepath.Join(dir, "nodir", "k"), k); err == nil {
		t.Error("SaveKeyring into a missing directory succeeded")
	}
}

func TestSecretText(t *testing.T) {
	s := NewSecret()
	p, err := ParseSecret(s.Base64())
	if err != nil || p != s {
		t.Fatalf("ParseSecret(Base64) = %v", err)
	}
	for _, leak := range []string{s.String(), s.GoString(), s.LogValue().String()} {
		if strings.Contains(leak, s.Base64()) || !strings.Contains(leak, "redacted") {
			t.Errorf("secret printed as %q", leak)
		}
	}
	if NewSecret() == s {
		t.Error("two secrets are equal")
	}
}

// FuzzParseKeyring: the parser never panics, and what it accepts
// marshals to text that parses back to the same keyring.
func FuzzParseKeyring(f *testing.F) {
	f.Add("[client.admin]\n\tkey = " + sampleKey + "\n\tcaps mon = \"allow *\"\n")
	f.Add("# c\n[osd.1]\nkey=" + sampleKey + "\ncaps osd = profile osd\n[client.x]\nkey = " + sampleKey + "\n")
	f.Add("[client.a]\nkey = " + sampleKey + "\ncaps mon = \"allow command \\\"a b\\\"\"\n")
	f.Fuzz(func(t *testing.T, text string) {
		k, err := ParseKeyring([]byte(text))
		if err != nil {
			return
		}
		out, err := k.Marshal()
		if err != nil {
			t.Fatalf("parsed keyring does not marshal: %v", err)
		}
		k2, err := ParseKeyring(out)
		if err != nil {
			t.Fatalf("marshalled keyring does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(k, k2) {
			t.Fatalf("round trip changed the keyring:\n%v\n%v", k, k2)
		}
	})
}

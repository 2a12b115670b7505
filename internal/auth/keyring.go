package auth

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Keyrings, in Ceph's INI-like text form:
//
//	# comment (also ';')
//	[client.admin]
//	    key = <base64 of 32 bytes>
//	    caps mon = "allow *"
//	    caps osd = "allow rw pool=rbd"
//
// Values may be bare (the rest of the line, trimmed) or double-quoted
// with \" and \\ escapes. Unknown settings are errors, so a typo does not
// silently drop a cap. Keys are Cuttle's raw 32-byte secrets; a Ceph key
// (a 28-byte AES-128 structure) does not parse.

// MaxKeyringSize bounds a keyring's text.
const MaxKeyringSize = 1 << 20

// KeyEntry is one entity of a keyring.
type KeyEntry struct {
	Key  Secret
	Caps Caps // nil or empty: no caps
}

// Keyring maps entities to their keys and caps. It implements KeyServer,
// so a monitor can serve from one.
type Keyring map[EntityName]KeyEntry

// Secret implements KeyServer.
func (k Keyring) Secret(name EntityName) (Secret, Caps, error) {
	e, ok := k[name]
	if !ok {
		return Secret{}, nil, fmt.Errorf("%w: %s", ErrUnknownEntity, name)
	}
	return e.Key, e.Caps, nil
}

// ParseKeyring parses keyring text. Errors wrap ErrBadKeyring and name the
// line.
func ParseKeyring(text []byte) (Keyring, error) {
	if len(text) > MaxKeyringSize {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrBadKeyring, len(text), MaxKeyringSize)
	}
	p := keyringParser{k: Keyring{}, haveKey: map[EntityName]bool{}}
	for i, line := range strings.Split(string(text), "\n") {
		if err := p.line(strings.TrimSpace(line)); err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrBadKeyring, i+1, err)
		}
	}
	if err := p.endSection(); err != nil {
		return nil, fmt.Errorf("%w: line %d: %w", ErrBadKeyring, p.sectionLine, err)
	}
	return p.k, nil
}

type keyringParser struct {
	k           Keyring
	cur         EntityName // the open section, zero before the first
	sectionLine int
	lineNo      int
	haveKey     map[EntityName]bool
}

func (p *keyringParser) line(line string) error {
	p.lineNo++
	switch {
	case line == "" || line[0] == '#' || line[0] == ';':
		return nil
	case line[0] == '[':
		return p.section(line)
	case p.cur.IsZero():
		return fmt.Errorf("setting %q outside any [entity] section", truncate([]byte(line)))
	}
	lhs, rhs, ok := strings.Cut(line, "=")
	if !ok {
		return fmt.Errorf("want NAME = VALUE, got %q", truncate([]byte(line)))
	}
	value, err := keyringValue(strings.TrimSpace(rhs))
	if err != nil {
		return err
	}
	e := p.k[p.cur]
	switch f := strings.Fields(lhs); {
	case len(f) == 1 && f[0] == "key":
		if p.haveKey[p.cur] {
			return fmt.Errorf("second key for %s", p.cur)
		}
		if e.Key, err = ParseSecret(value); err != nil {
			return err
		}
		p.haveKey[p.cur] = true
	case len(f) == 2 && f[0] == "caps":
		if _, dup := e.Caps[f[1]]; dup {
			return fmt.Errorf("second caps %s for %s", f[1], p.cur)
		}
		if _, err := ParseCaps(f[1], value); err != nil {
			return err
		}
		if e.Caps == nil {
			e.Caps = Caps{}
		}
		e.Caps[f[1]] = value
	default:
		return fmt.Errorf("unknown setting %q (want key or caps SERVICE)", truncate([]byte(strings.TrimSpace(lhs))))
	}
	p.k[p.cur] = e
	return nil
}

func (p *keyringParser) section(line string) error {
	if err := p.endSection(); err != nil {
		return fmt.Errorf("section at line %d: %w", p.sectionLine, err)
	}
	inner, ok := strings.CutSuffix(line, "]")
	if !ok {
		return fmt.Errorf("section header %q lacks ]", truncate([]byte(line)))
	}
	name, err := ParseEntityName(strings.TrimSpace(inner[1:]))
	if err != nil {
		return err
	}
	if _, dup := p.k[name]; dup {
		return fmt.Errorf("second section for %s", name)
	}
	p.cur, p.sectionLine = name, p.lineNo
	p.k[name] = KeyEntry{}
	return nil
}

// endSection checks the open section got a key.
func (p *keyringParser) endSection() error {
	if !p.cur.IsZero() && !p.haveKey[p.cur] {
		return fmt.Errorf("%s has no key", p.cur)
	}
	return nil
}

// keyringValue unquotes a double-quoted value; a bare one stands as is.
func keyringValue(v string) (string, error) {
	if !strings.HasPrefix(v, `"`) {
		return v, nil
	}
	s, n, err := lexQuoted(v)
	if err != nil {
		return "", err
	}
	if rest := strings.TrimSpace(v[n:]); rest != "" {
		return "", fmt.Errorf("text %q after the quoted value", truncate([]byte(rest)))
	}
	return s, nil
}

// Marshal renders the keyring in canonical form: entities sorted by name,
// caps sorted by service, cap values quoted. It fails on what would not
// parse back: a name with a line break or surrounding space, caps that do
// not parse, a zero key.
func (k Keyring) Marshal() ([]byte, error) {
	names := make([]EntityName, 0, len(k))
	for n := range k {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b EntityName) int { return strings.Compare(a.String(), b.String()) })
	var b bytes.Buffer
	for _, n := range names {
		e := k[n]
		if err := checkKeyringEntry(n, e); err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "[%s]\n\tkey = %s\n", n, e.Key.Base64())
		services := make([]string, 0, len(e.Caps))
		for s := range e.Caps {
			services = append(services, s)
		}
		slices.Sort(services)
		for _, s := range services {
			fmt.Fprintf(&b, "\tcaps %s = %s\n", s, quoteAlways(e.Caps[s]))
		}
	}
	return b.Bytes(), nil
}

func checkKeyringEntry(n EntityName, e KeyEntry) error {
	if _, err := ParseEntityName(n.String()); err != nil || strings.TrimSpace(n.ID) != n.ID || strings.Contains(n.ID, "\n") {
		return fmt.Errorf("%w: entity name %q cannot be written", ErrBadKeyring, n.String())
	}
	if e.Key.IsZero() {
		return fmt.Errorf("%w: %s has a zero key", ErrBadKeyring, n)
	}
	for s, text := range e.Caps {
		if _, err := ParseCaps(s, text); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBadKeyring, n, err)
		}
	}
	return nil
}

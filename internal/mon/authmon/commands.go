package authmon

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// Arguments of the commands (Command.Args names). Caps travel one
// argument per service, "caps.SERVICE" (caps.mon, caps.osd, caps.mds,
// caps.mgr), whose value is that service's cap text in the grammar of
// auth.ParseCaps; a blank value grants nothing for the service.
//
//	auth add           entity=NAME [caps.SERVICE=CAPS ...]
//	auth get-or-create entity=NAME [caps.SERVICE=CAPS ...]
//	auth caps          entity=NAME caps.SERVICE=CAPS [caps.SERVICE=CAPS ...]
//	auth rm            entity=NAME
//	auth import        keyring=TEXT [bootstrap=true]
//	auth rotate
//	auth get           entity=NAME
//	auth print-key     entity=NAME
//	auth ls
//
// "auth rotate" and "auth import bootstrap=true" are what the leader's
// Tick sends; an operator may send them too (rotate does only what is
// due; a bootstrap import is refused once the database is seeded).
//
// Entities of type mon are the monitors' own: they authenticate to each
// other with the shared key "mon.*", read from their data directories. A
// command that would add, change or remove one would split the quorum on
// the next restart, so those are refused with EPERM; they enter the
// database only through the bootstrap import, and a later import may
// repeat them unchanged.

// capsPrefix starts the name of a caps argument.
const capsPrefix = "caps."

// entityView is one entity in JSON replies (Ceph's shape).
type entityView struct {
	Entity string            `json:"entity"`
	Key    string            `json:"key"`
	Caps   map[string]string `json:"caps"`
}

func view(n auth.EntityName, e auth.KeyEntry) entityView {
	caps := maps.Clone(e.Caps)
	if caps == nil {
		caps = map[string]string{}
	}
	return entityView{Entity: n.String(), Key: e.Key.Base64(), Caps: caps}
}

// entityArg reads and checks the entity argument.
func entityArg(c moncmd.Command) (auth.EntityName, *moncmd.Reply) {
	s, err := c.Str("entity")
	if err != nil {
		r := moncmd.FromError(err, moncmd.EINVAL)
		return auth.EntityName{}, &r
	}
	n, err := parseName(s)
	if err != nil {
		r := moncmd.Errorf(moncmd.EINVAL, "%s: %v", c.Prefix, err)
		return auth.EntityName{}, &r
	}
	return n, nil
}

// capsArgs reads the caps arguments, checking each with auth.ParseCaps;
// n counts them, blank ones included. Arguments other than entity and
// caps.* are refused, so a misspelt one is not silently dropped.
func capsArgs(c moncmd.Command) (caps auth.Caps, n int, bad *moncmd.Reply) {
	caps = auth.Caps{}
	for _, k := range slices.Sorted(maps.Keys(c.Args)) {
		if k == "entity" || k == callerArg {
			continue
		}
		svc, ok := strings.CutPrefix(k, capsPrefix)
		if !ok {
			r := moncmd.Errorf(moncmd.EINVAL, "%s: unknown argument %q (caps go as caps.SERVICE=TEXT)", c.Prefix, k)
			return nil, 0, &r
		}
		n++
		text := c.Args[k]
		if strings.TrimSpace(text) == "" {
			if _, err := auth.ParseCaps(svc, ""); err != nil {
				r := moncmd.Errorf(moncmd.EINVAL, "%s: %v", c.Prefix, err)
				return nil, 0, &r
			}
			continue
		}
		if _, err := auth.ParseCaps(svc, text); err != nil {
			r := moncmd.Errorf(moncmd.EINVAL, "%s: %v", c.Prefix, err)
			return nil, 0, &r
		}
		caps[svc] = text
	}
	return caps, n, nil
}

// protected refuses commands that would touch a monitor's key.
func protected(c moncmd.Command, n auth.EntityName) *moncmd.Reply {
	if n.Type != "mon" {
		return nil
	}
	r := moncmd.Errorf(moncmd.EPERM, "%s: %s is a monitors' key: the monitors authenticate to each other with it, so commands may not add, change or remove it", c.Prefix, n)
	return &r
}

func (s *Service) prepareAdd(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	return s.prepareCreate(c, false)
}

func (s *Service) prepareGetOrCreate(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	return s.prepareCreate(c, true)
}

// prepareCreate is add (show false) and get-or-create (show true): a new
// entity gets a new key; an existing one with the same caps is left as
// it is; one with other caps is refused with EEXIST.
func (s *Service) prepareCreate(c moncmd.Command, show bool) ([]byte, moncmd.Reply) {
	name, bad := entityArg(c)
	if bad != nil {
		return nil, *bad
	}
	caps, _, bad := capsArgs(c)
	if bad != nil {
		return nil, *bad
	}
	if cur, ok := s.db.entities[name]; ok {
		if !capsEqual(cur.Caps, caps) {
			return nil, moncmd.Errorf(moncmd.EEXIST, "%s: entity %s exists with other caps (%s); change them with auth caps",
				c.Prefix, name, capsText(cur.Caps))
		}
		if show {
			return nil, entityReply(name, cur)
		}
		return nil, moncmd.Reply{Status: fmt.Sprintf("entity %s exists with the same caps", name)}
	}
	if bad := protected(c, name); bad != nil {
		return nil, *bad
	}
	p := proposal{base: s.db.version, op: opAdd,
		entities: []namedEntry{{name, auth.KeyEntry{Key: s.cfg.NewSecret(), Caps: caps}}}}
	if show {
		p.flags = flagShow
	}
	return p.encode(), moncmd.Reply{}
}

func (s *Service) prepareCaps(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	name, bad := entityArg(c)
	if bad != nil {
		return nil, *bad
	}
	caps, n, bad := capsArgs(c)
	if bad != nil {
		return nil, *bad
	}
	if n == 0 {
		return nil, moncmd.Errorf(moncmd.EINVAL, "auth caps: no caps given (caps.SERVICE=TEXT; a blank TEXT grants nothing)")
	}
	if bad := protected(c, name); bad != nil {
		return nil, *bad
	}
	cur, ok := s.db.entities[name]
	if !ok {
		return nil, moncmd.Errorf(moncmd.ENOENT, "auth caps: unknown entity %s", name)
	}
	if capsEqual(cur.Caps, caps) {
		return nil, moncmd.Reply{Status: fmt.Sprintf("caps of %s are already %s", name, capsText(caps))}
	}
	p := proposal{base: s.db.version, op: opCaps, entities: []namedEntry{{name, auth.KeyEntry{Caps: caps}}}}
	return p.encode(), moncmd.Reply{}
}

func (s *Service) prepareRm(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	name, bad := entityArg(c)
	if bad != nil {
		return nil, *bad
	}
	if bad := protected(c, name); bad != nil {
		return nil, *bad
	}
	if _, ok := s.db.entities[name]; !ok {
		return nil, moncmd.Errorf(moncmd.ENOENT, "auth rm: unknown entity %s", name)
	}
	p := proposal{base: s.db.version, op: opRm, entities: []namedEntry{{name: name}}}
	return p.encode(), moncmd.Reply{}
}

// prepareImport puts a keyring's entities, keys and caps as given,
// replacing entities of the same name (Ceph's auth import). Entities
// already present unchanged are left out; a bootstrap import carries
// them all and marks the database seeded.
func (s *Service) prepareImport(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	text, err := c.Str("keyring")
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	bootstrap := c.StrOr("bootstrap", "false")
	if bootstrap != "true" && bootstrap != "false" {
		return nil, moncmd.Errorf(moncmd.EINVAL, "auth import: bootstrap %q (want true or false)", bootstrap)
	}
	if bootstrap == "true" && s.db.seeded {
		return nil, moncmd.Reply{Status: "the auth database is already seeded"}
	}
	kr, err := auth.ParseKeyring([]byte(text))
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "auth import: %v", err)
	}
	if len(kr) == 0 {
		return nil, moncmd.Errorf(moncmd.EINVAL, "auth import: the keyring holds no entities")
	}
	if len(kr) > maxEntities {
		return nil, moncmd.Errorf(moncmd.EINVAL, "auth import: %d entities, limit %d", len(kr), maxEntities)
	}
	p := proposal{base: s.db.version, op: opImport}
	if bootstrap == "true" {
		p.flags = flagBootstrap
	}
	for _, name := range slices.SortedFunc(maps.Keys(kr), compareNames) {
		if _, err := parseName(name.String()); err != nil {
			return nil, moncmd.Errorf(moncmd.EINVAL, "auth import: %v", err)
		}
		e := auth.KeyEntry{Key: kr[name].Key, Caps: auth.Caps{}}
		for svc, text := range kr[name].Caps {
			if strings.TrimSpace(text) != "" {
				e.Caps[svc] = text
			}
		}
		cur, ok := s.db.entities[name]
		same := ok && cur.Key == e.Key && capsEqual(cur.Caps, e.Caps)
		if same && p.flags&flagBootstrap == 0 {
			continue
		}
		if !same && p.flags&flagBootstrap == 0 {
			if bad := protected(c, name); bad != nil {
				return nil, *bad
			}
		}
		p.entities = append(p.entities, namedEntry{name, e})
	}
	if len(p.entities) == 0 {
		return nil, moncmd.Reply{Status: "every entity of the keyring is already present"}
	}
	return p.encode(), moncmd.Reply{}
}

func (s *Service) queryGet(c moncmd.Command) moncmd.Reply {
	name, bad := entityArg(c)
	if bad != nil {
		return *bad
	}
	e, ok := s.db.entities[name]
	if !ok {
		return moncmd.Errorf(moncmd.ENOENT, "auth get: unknown entity %s", name)
	}
	return entityReply(name, e)
}

func (s *Service) queryPrintKey(c moncmd.Command) moncmd.Reply {
	name, bad := entityArg(c)
	if bad != nil {
		return *bad
	}
	e, ok := s.db.entities[name]
	if !ok {
		return moncmd.Errorf(moncmd.ENOENT, "auth print-key: unknown entity %s", name)
	}
	return replyJSON(map[string]string{"key": e.Key.Base64()}, e.Key.Base64()+"\n")
}

// queryLs lists every entity with its key and caps, as Ceph's auth ls.
func (s *Service) queryLs(moncmd.Command) moncmd.Reply {
	views := []entityView{}
	var b strings.Builder
	for _, n := range s.db.sortedNames() {
		e := s.db.entities[n]
		views = append(views, view(n, e))
		fmt.Fprintf(&b, "%s\n\tkey: %s\n", n, e.Key.Base64())
		for _, svc := range slices.Sorted(maps.Keys(e.Caps)) {
			fmt.Fprintf(&b, "\tcaps: [%s] %s\n", svc, e.Caps[svc])
		}
	}
	return replyJSON(map[string][]entityView{"auth_dump": views}, b.String())
}

// entityReply answers with one entity: its keyring text for people (to
// save as the entity's keyring file) and a one-element list in JSON.
func entityReply(n auth.EntityName, e auth.KeyEntry) moncmd.Reply {
	text, err := auth.Keyring{n: e}.Marshal()
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "auth: %s cannot be written as a keyring: %v", n, err)
	}
	return replyJSON([]entityView{view(n, e)}, string(text))
}

// capsText renders caps for messages: "mon=allow r osd=..." or "none".
func capsText(c auth.Caps) string {
	if len(c) == 0 {
		return "none"
	}
	var parts []string
	for _, svc := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%s=%q", svc, c[svc]))
	}
	return strings.Join(parts, " ")
}

// replyJSON is a successful reply with v as its data.
func replyJSON(v any, text string) moncmd.Reply {
	data, err := json.Marshal(v)
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "auth: encoding reply: %v", err)
	}
	return moncmd.Reply{Data: data, Text: text}
}

// callerArg is the argument the monitor sets to the authenticated caller
// (mon.CallerArg; authmon cannot import the driver).
const callerArg = "_caller"

// queryGetRotating hands a daemon its service's rotating keys, sealed
// with the daemon's own secret: how an OSD (or MDS) learns the keys that
// open the tickets clients show it. Only an entity of that service's
// type gets them (osd.3 the osd keys), and only for itself.
func (s *Service) queryGetRotating(c moncmd.Command) moncmd.Reply {
	caller, err := auth.ParseEntityName(c.StrOr(callerArg, ""))
	if err != nil {
		return moncmd.Errorf(moncmd.EACCES, "auth get-rotating: the caller is not known: %v", err)
	}
	service := c.StrOr("service", caller.Type)
	if caller.Type == "client" || service != caller.Type {
		return moncmd.Errorf(moncmd.EACCES, "auth get-rotating: %s may not have the %s service's keys", caller, service)
	}
	keys, ok := s.db.rotating[service]
	if !ok {
		return moncmd.Errorf(moncmd.ENOENT, "auth get-rotating: no rotating keys for service %q (auth none, or not rotated yet)", service)
	}
	e, ok := s.db.entities[caller]
	if !ok {
		return moncmd.Errorf(moncmd.ENOENT, "auth get-rotating: unknown entity %s", caller)
	}
	box := keys.Seal(e.Key[:])
	ids := []uint64{}
	for _, k := range keys.Keys() {
		ids = append(ids, k.ID)
	}
	text := fmt.Sprintf("%d rotating keys of service %s, sealed for %s\n", len(ids), service, caller)
	r := replyJSON(map[string]any{"service": service, "key_ids": ids}, text)
	r.Data, _ = json.Marshal(map[string]any{"service": service, "key_ids": ids, "sealed": box})
	return r
}

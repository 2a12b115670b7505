package meta

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Perm is an S3 ACL permission. FULL_CONTROL is one grant that holds the
// four others (the gateway's access check says so); it is stored as
// granted, so an ACL reads back as it was written.
type Perm uint8

// The permissions, as S3 names them in the comments.
const (
	PermRead        Perm = 1 // READ
	PermWrite       Perm = 2 // WRITE
	PermReadACP     Perm = 3 // READ_ACP
	PermWriteACP    Perm = 4 // WRITE_ACP
	PermFullControl Perm = 5 // FULL_CONTROL
)

// GranteeKind says whom a grant names.
type GranteeKind uint8

// The grantees: a user (by canonical ID, the user's name) or one of
// S3's predefined groups.
const (
	GranteeUser          GranteeKind = 1 // CanonicalUser, ID = user name
	GranteeAllUsers      GranteeKind = 2 // http://acs.amazonaws.com/groups/global/AllUsers
	GranteeAuthenticated GranteeKind = 3 // http://acs.amazonaws.com/groups/global/AuthenticatedUsers
	GranteeLogDelivery   GranteeKind = 4 // http://acs.amazonaws.com/groups/s3/LogDelivery
)

// Grant gives one permission to one grantee.
type Grant struct {
	Kind GranteeKind
	ID   string // the user's name for GranteeUser, "" otherwise
	Perm Perm
}

// ACL is a bucket's or an object's access control list; the owner is
// kept beside it, in the record.
type ACL struct {
	Grants []Grant
}

// maxGrants bounds an ACL (S3's limit is 100).
const maxGrants = 100

// Private is the ACL S3 gives by default: the owner's FULL_CONTROL.
func Private(owner string) ACL {
	return ACL{Grants: []Grant{{Kind: GranteeUser, ID: owner, Perm: PermFullControl}}}
}

func encodeACL(e *encoding.Encoder, a ACL) {
	e.Uvarint(uint64(len(a.Grants)))
	for _, g := range a.Grants {
		e.Uint8(uint8(g.Kind))
		e.String(g.ID)
		e.Uint8(uint8(g.Perm))
	}
}

func decodeACL(d *encoding.Decoder) ACL {
	n := d.Count(3)
	if n > maxGrants {
		d.Fail(fmt.Errorf("%d grants", n))
		return ACL{}
	}
	var a ACL
	for i := 0; i < n && d.Err() == nil; i++ {
		g := Grant{Kind: GranteeKind(d.Uint8()), ID: d.String(maxName), Perm: Perm(d.Uint8())}
		if d.Err() != nil {
			break
		}
		if g.Kind < GranteeUser || g.Kind > GranteeLogDelivery || g.Perm < PermRead || g.Perm > PermFullControl {
			d.Fail(fmt.Errorf("grant of kind %d, permission %d", g.Kind, g.Perm))
			break
		}
		if (g.Kind == GranteeUser) != (g.ID != "") {
			d.Fail(fmt.Errorf("grant of kind %d with id %q", g.Kind, g.ID))
			break
		}
		a.Grants = append(a.Grants, g)
	}
	return a
}

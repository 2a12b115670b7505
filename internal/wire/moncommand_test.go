package wire

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

func TestCommandRoundTrip(t *testing.T) {
	c := NewCommand("osd pool create", "pool", "rbd", "pg_num", "64", "empty", "")
	got, err := DecodeCommand(c.Encode())
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if n, err := got.Int("pg_num"); err != nil || n != 64 {
		t.Fatalf("pg_num %d %v", n, err)
	}
	if _, err := got.Int("pool"); !errors.Is(err, ErrBadArg) {
		t.Fatalf("non-integer: %v", err)
	}
	if _, err := got.Str("empty"); !errors.Is(err, ErrBadArg) {
		t.Fatalf("empty required argument: %v", err)
	}
	if _, err := got.Str("size"); !errors.Is(err, ErrBadArg) {
		t.Fatalf("missing argument: %v", err)
	}
	if n, err := got.IntOr("size", 3); err != nil || n != 3 {
		t.Fatalf("default: %d %v", n, err)
	}
	if FromError(errors.New("x"), ENOENT).Code != ENOENT || FromError(errors.Join(ErrBadArg), ENOENT).Code != EINVAL {
		t.Fatal("FromError codes")
	}
}

func TestReplyRoundTrip(t *testing.T) {
	r := Reply{Code: -EEXIST, Status: "pool 'rbd' exists", Data: []byte(`{"pool":"rbd"}`), Text: "ok\n"}
	got, err := DecodeReply(r.Encode())
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if err := (Reply{Code: ENOENT, Status: "no such pool"}).Err(); err == nil || err.Error() != "no such pool (ENOENT)" {
		t.Fatalf("Err: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(NewCommand("osd set", "key", "noout").Encode())
	f.Add(Reply{Code: 2, Status: "x", Data: []byte("{}")}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := DecodeCommand(b); err == nil {
			if again, err := DecodeCommand(c.Encode()); err != nil || !reflect.DeepEqual(again, c) {
				t.Fatalf("command re-decode: %v", err)
			}
		} else if !errors.Is(err, encoding.ErrCorrupt) && !errors.Is(err, encoding.ErrTruncated) && !errors.Is(err, encoding.ErrUnsupportedVersion) {
			t.Fatalf("unclassified error: %v", err)
		}
		if r, err := DecodeReply(b); err == nil {
			if again, err := DecodeReply(r.Encode()); err != nil || again.Code != r.Code || again.Status != r.Status {
				t.Fatalf("reply re-decode: %v", err)
			}
		}
	})
}

// Argument errors are ErrBadArg by class, and their text says what is
// wrong without this package's name (issue 35: "wire: bad argument:"
// reached people).
func TestBadArgText(t *testing.T) {
	c := NewCommand("osd pool create", "pg_num", "abc")
	_, err := c.Int("pg_num")
	if !errors.Is(err, ErrBadArg) {
		t.Fatalf("%v is not ErrBadArg", err)
	}
	if got, want := err.Error(), `osd pool create: "pg_num" is not an integer: "abc"`; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if r := FromError(fmt.Errorf("wrapped: %w", err), EIO); r.Code != EINVAL || strings.Contains(r.Status, "wire") {
		t.Errorf("reply %+v", r)
	}
}

func TestErrnoName(t *testing.T) {
	for code, want := range map[int32]string{EPERM: "EPERM", -ENOSPC: "ENOSPC", ERANGE: "ERANGE", 999: "error 999"} {
		if got := ErrnoName(code); got != want {
			t.Errorf("ErrnoName(%d) = %q, want %q", code, got, want)
		}
	}
}

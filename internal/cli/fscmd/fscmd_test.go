package fscmd

import (
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
)

func TestParseMask(t *testing.T) {
	for in, want := range map[string]uint32{
		"":              0,
		"size":          wire.AttrSize,
		"size, mtime":   wire.AttrSize | wire.AttrMtime,
		"mode,uid,gid,": wire.AttrMode | wire.AttrUID | wire.AttrGID,
		"nlink,ctime":   wire.AttrNlink | wire.AttrCtime,
		"atime,atime":   wire.AttrAtime,
	} {
		got, err := parseMask(in)
		if err != nil || got != want {
			t.Errorf("parseMask(%q) = %#x, %v; want %#x", in, got, err, want)
		}
	}
	if _, err := parseMask("size,bogus"); err == nil {
		t.Error("parseMask accepted bogus")
	}
	if got := approxNames(wire.AttrSize | wire.AttrMtime); !reflect.DeepEqual(got, []string{"size", "mtime"}) {
		t.Errorf("approxNames = %v", got)
	}
	if got := typeOnly(0o040755); got != "d" {
		t.Errorf("typeOnly(dir) = %q", got)
	}
	if got := typeOnly(0o100644); got != "-" {
		t.Errorf("typeOnly(file) = %q", got)
	}
}

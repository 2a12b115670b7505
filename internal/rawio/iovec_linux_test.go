package rawio

import (
	"bytes"
	"testing"
	"unsafe"
)

func TestIovecsSkipEmpty(t *testing.T) {
	bufs := [][]byte{[]byte("ab"), nil, {}, []byte("c")}
	iov := Iovecs(nil, bufs)
	if len(iov) != 2 || iov[0].Len != 2 || iov[1].Len != 1 || iov[1].Base != &bufs[3][0] {
		t.Fatalf("iovecs %+v, want two: ab and c", iov)
	}
}

func TestSkip(t *testing.T) {
	iov := Iovecs(nil, [][]byte{[]byte("abc"), []byte("defg")})
	for _, step := range []struct {
		n    int
		rest string
	}{{0, "abcdefg"}, {2, "cdefg"}, {1, "defg"}, {2, "fg"}, {2, ""}} {
		iov = Skip(iov, step.n)
		var got []byte
		for _, v := range iov {
			got = append(got, unsafe.Slice(v.Base, v.Len)...)
		}
		if !bytes.Equal(got, []byte(step.rest)) {
			t.Fatalf("after %d more bytes: %q left, want %q", step.n, got, step.rest)
		}
	}
}

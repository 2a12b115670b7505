package proto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

func TestParseClientFlags(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		want uint32
		ok   bool
	}{
		{[]byte{0, 0, 0, 1}, ClientFixedNewstyle, true},
		{[]byte{0, 0, 0, 3}, ClientFixedNewstyle | ClientNoZeroes, true},
		{[]byte{0, 0, 0, 0}, 0, false}, // oldstyle newstyle: not spoken
		{[]byte{0, 0, 0, 2}, 0, false},
		{[]byte{0, 0, 0, 5}, 0, false}, // unknown flag: proto.md says the server closes
		{[]byte{0, 0, 1}, 0, false},
	} {
		got, err := ParseClientFlags(tc.b)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseClientFlags(%v) = %#x, %v", tc.b, got, err)
		}
		if err != nil && !errors.Is(err, ErrProtocol) {
			t.Errorf("error %v is not ErrProtocol", err)
		}
	}
}

func TestParseOption(t *testing.T) {
	b := binary.BigEndian.AppendUint64(nil, OptMagic)
	b = binary.BigEndian.AppendUint32(b, OptGo)
	b = binary.BigEndian.AppendUint32(b, 7)
	h, err := ParseOption(b)
	if err != nil || h != (OptionHeader{Option: OptGo, Length: 7}) {
		t.Fatalf("ParseOption = %+v, %v", h, err)
	}
	b[0] ^= 1
	if _, err := ParseOption(b); err == nil {
		t.Fatal("bad magic accepted")
	}
	if _, err := ParseOption(b[:15]); err == nil {
		t.Fatal("short header accepted")
	}
}

func str(s string) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(len(s))), s...) }

func TestParseInfoRequest(t *testing.T) {
	b := append(str("disk"), 0, 2, 0, 3, 0, 1)
	q, err := ParseInfoRequest(b)
	if err != nil || !reflect.DeepEqual(q, InfoRequest{Name: "disk", Infos: []uint16{InfoBlockSize, InfoName}}) {
		t.Fatalf("ParseInfoRequest = %+v, %v", q, err)
	}
	for name, bad := range map[string][]byte{
		"count says more than sent": append(str("disk"), 0, 2, 0, 3),
		"trailing bytes":            append(str("disk"), 0, 0, 9),
		"name past the end":         {0, 0, 0, 9, 'a'},
		"name too long":             binary.BigEndian.AppendUint32(nil, MaxString+1),
		"empty":                     nil,
	} {
		if _, err := ParseInfoRequest(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseMetaContextRequest(t *testing.T) {
	b := append(str(""), 0, 0, 0, 2)
	b = append(append(b, str("base:allocation")...), str("qemu:dirty-bitmap:x")...)
	q, err := ParseMetaContextRequest(b)
	if err != nil || !reflect.DeepEqual(q, MetaContextRequest{Export: "", Queries: []string{"base:allocation", "qemu:dirty-bitmap:x"}}) {
		t.Fatalf("ParseMetaContextRequest = %+v, %v", q, err)
	}
	if _, err := ParseMetaContextRequest(append(str("x"), 0xff, 0xff, 0xff, 0xff)); err == nil {
		t.Fatal("a count of 2^32-1 queries with none sent was accepted")
	}
}

func TestRequestRoundTrip(t *testing.T) {
	q := Request{Flags: CmdFlagFUA, Type: CmdWrite, Cookie: 0xdeadbeefcafe, Offset: 1 << 40, Length: 4096}
	b := AppendRequest(nil, q)
	got, err := ParseRequest(b)
	if err != nil || got != q {
		t.Fatalf("ParseRequest(AppendRequest(%+v)) = %+v, %v", q, got, err)
	}
	b[3] ^= 1
	if _, err := ParseRequest(b); err == nil {
		t.Fatal("bad magic accepted")
	}
}

// Each rule of Check, named after the proto.md text it follows.
func TestCheck(t *testing.T) {
	rw := ExportState{Size: 1 << 20, Structured: true, MetaContext: true}
	ro := ExportState{Size: 1 << 20, ReadOnly: true}
	for _, tc := range []struct {
		name string
		q    Request
		e    ExportState
		want Errno
	}{
		{"read in range", Request{Type: CmdRead, Offset: 0, Length: 1 << 20}, rw, 0},
		{"read past the end: EINVAL", Request{Type: CmdRead, Offset: 1, Length: 1 << 20}, rw, EINVAL},
		{"read over the maximum: EOVERFLOW", Request{Type: CmdRead, Length: MaxPayload + 1}, ExportState{Size: 1 << 30}, EOVERFLOW},
		{"offset wraps around", Request{Type: CmdRead, Offset: ^uint64(0), Length: 2}, rw, EINVAL},
		{"write past the end: ENOSPC", Request{Type: CmdWrite, Offset: 1 << 20, Length: 1}, rw, ENOSPC},
		{"write to a read-only export: EPERM", Request{Type: CmdWrite, Length: 1}, ro, EPERM},
		{"trim on read-only: EPERM", Request{Type: CmdTrim, Length: 1}, ro, EPERM},
		{"write zeroes on read-only: EPERM", Request{Type: CmdWriteZeroes, Length: 1}, ro, EPERM},
		{"write over the maximum: EINVAL", Request{Type: CmdWrite, Length: MaxPayload + 1}, ExportState{Size: 1 << 30}, EINVAL},
		{"write with FUA", Request{Type: CmdWrite, Flags: CmdFlagFUA, Length: 1}, rw, 0},
		{"write with NO_HOLE: not its flag", Request{Type: CmdWrite, Flags: CmdFlagNoHole, Length: 1}, rw, EINVAL},
		{"write zeroes with NO_HOLE", Request{Type: CmdWriteZeroes, Flags: CmdFlagNoHole | CmdFlagFUA, Length: 1}, rw, 0},
		{"unknown command", Request{Type: 99}, rw, EINVAL},
		{"cache: not advertised", Request{Type: CmdCache, Length: 1}, rw, EINVAL},
		{"flush", Request{Type: CmdFlush}, rw, 0},
		{"flush with a length", Request{Type: CmdFlush, Length: 1}, rw, EINVAL},
		{"read-only exports flush", Request{Type: CmdFlush}, ro, 0},
		{"DF without structured replies", Request{Type: CmdRead, Flags: CmdFlagDF, Length: 1}, ro, EINVAL},
		{"DF with them", Request{Type: CmdRead, Flags: CmdFlagDF, Length: 1}, rw, 0},
		{"block status", Request{Type: CmdBlockStatus, Flags: CmdFlagReqOne, Length: 512}, rw, 0},
		{"block status without a context", Request{Type: CmdBlockStatus, Length: 512}, ro, EINVAL},
		{"block status of 0 bytes", Request{Type: CmdBlockStatus}, rw, EINVAL},
		{"block status past the end", Request{Type: CmdBlockStatus, Offset: 1 << 20, Length: 1}, rw, EINVAL},
		{"disc", Request{Type: CmdDisc}, ro, 0},
	} {
		if got, why := Check(tc.q, tc.e); got != tc.want {
			t.Errorf("%s: Check = %v (%s), want %v", tc.name, got, why, tc.want)
		}
	}
}

func TestRuns(t *testing.T) {
	buf := make([]byte, 10)
	buf[4] = 1
	got := Runs(buf, 2)
	want := []Run{{Off: 0, Len: 4, Zero: true}, {Off: 4, Len: 2}, {Off: 6, Len: 4, Zero: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Runs = %+v, want %+v", got, want)
	}
	if got := Runs(buf[:9], 4); !reflect.DeepEqual(got, []Run{{Off: 0, Len: 4, Zero: true}, {Off: 4, Len: 4}, {Off: 8, Len: 1, Zero: true}}) {
		t.Fatalf("Runs with a short last block = %+v", got)
	}
	if Runs(nil, 4) != nil {
		t.Fatal("Runs of nothing is not empty")
	}
}

func TestAllocationExtents(t *testing.T) {
	hole := StateHole | StateZero
	for _, tc := range []struct {
		off, n uint64
		data   []Span
		reqOne bool
		want   []Extent
	}{
		{0, 100, nil, false, []Extent{{100, hole}}},
		{0, 100, []Span{{0, 100}}, false, []Extent{{100, 0}}},
		{10, 100, []Span{{0, 20}, {20, 10}, {50, 100}}, false, []Extent{{20, 0}, {20, hole}, {60, 0}}},
		{10, 100, []Span{{0, 20}, {50, 100}}, true, []Extent{{10, 0}}},
		{0, 10, []Span{{20, 5}}, false, []Extent{{10, hole}}},
	} {
		if got := AllocationExtents(tc.off, tc.n, tc.data, tc.reqOne); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("AllocationExtents(%d, %d, %v, %v) = %v, want %v", tc.off, tc.n, tc.data, tc.reqOne, got, tc.want)
		}
	}
}

func TestReplies(t *testing.T) {
	b := AppendHoleChunk(nil, 7, ReplyFlagDone, 4096, 512)
	want := binary.BigEndian.AppendUint32(nil, StructuredReplyMagic)
	want = append(want, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 12)
	want = binary.BigEndian.AppendUint64(want, 4096)
	want = binary.BigEndian.AppendUint32(want, 512)
	if !bytes.Equal(b, want) {
		t.Fatalf("hole chunk\n%x\nwant\n%x", b, want)
	}
	if n := len(ExportNameReply(1, 1, false)); n != 134 {
		t.Fatalf("export name reply of %d bytes, want 134", n)
	}
	if n := len(ExportNameReply(1, 1, true)); n != 10 {
		t.Fatalf("export name reply with NO_ZEROES of %d bytes, want 10", n)
	}
	if n := len(AppendErrorChunk(nil, 1, 0, EIO, string(make([]byte, 70000)))); n != ChunkHeaderLen+6+MaxString {
		t.Fatalf("an error chunk with a long message is %d bytes", n)
	}
}

func TestClientDecoders(t *testing.T) {
	h, err := ParseOptionReply(OptionReply(OptGo, RepErrUnknown, []byte("no"))[:OptionReplyHeaderLen])
	if err != nil || h != (OptionReplyHeader{Option: OptGo, Type: RepErrUnknown, Length: 2}) {
		t.Fatalf("ParseOptionReply = %+v, %v", h, err)
	}
	if f, err := ParseGreeting(Greeting(FlagFixedNewstyle | FlagNoZeroes)); err != nil || f != 3 {
		t.Fatalf("ParseGreeting = %v, %v", f, err)
	}
	if _, err := ParseGreeting(Greeting(0)); err == nil {
		t.Fatal("a greeting without fixed newstyle was accepted")
	}
	if n, d, err := ParseServerData(ServerData("disk", "desc")); n != "disk" || d != "desc" || err != nil {
		t.Fatalf("ParseServerData = %q %q %v", n, d, err)
	}
	var in Info
	for _, b := range [][]byte{InfoExportData(7, 2), InfoStringData(InfoName, "n"), InfoStringData(InfoDescription, "d"), InfoBlockSizeData(1, 2, 3), {0, 99, 1}} {
		if err := ParseInfo(b, &in); err != nil {
			t.Fatal(err)
		}
	}
	if in != (Info{Size: 7, Flags: 2, Name: "n", Description: "d", MinBlock: 1, PreferredBlock: 2, MaxBlock: 3}) {
		t.Fatalf("ParseInfo: %+v", in)
	}
	if err := ParseInfo(InfoExportData(7, 2)[:5], &in); err == nil {
		t.Fatal("a short export info was accepted")
	}
}

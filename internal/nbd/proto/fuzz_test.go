package proto

import "testing"

// The decoders take any bytes without panicking, and what they accept
// re-encodes to the same bytes.

func FuzzParseRequest(f *testing.F) {
	f.Add(AppendRequest(nil, Request{Type: CmdRead, Length: 512}))
	f.Add([]byte("short"))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParseRequest(b)
		if err == nil && string(AppendRequest(nil, q)) != string(b) {
			t.Fatalf("%x decodes to %+v, which encodes differently", b, q)
		}
		if err == nil {
			Check(q, ExportState{Size: 1 << 20})
		}
	})
}

func FuzzParseOption(f *testing.F) {
	f.Add([]byte("IHAVEOPT\x00\x00\x00\x07\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseOption(b) })
}

func FuzzParseClientFlags(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3})
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseClientFlags(b) })
}

func FuzzParseInfoRequest(f *testing.F) {
	f.Add(append(str("disk"), 0, 1, 0, 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParseInfoRequest(b)
		if err == nil && (len(q.Name) > MaxString || 4+len(q.Name)+2+2*len(q.Infos) != len(b)) {
			t.Fatalf("%x decodes to %+v", b, q)
		}
	})
}

func FuzzParseMetaContextRequest(f *testing.F) {
	f.Add(append(append(str("disk"), 0, 0, 0, 1), str(BaseAllocation)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParseMetaContextRequest(b)
		if err != nil {
			return
		}
		n := 8 + len(q.Export)
		for _, s := range q.Queries {
			n += 4 + len(s)
		}
		if n != len(b) {
			t.Fatalf("%x decodes to %+v", b, q)
		}
	})
}

func FuzzRuns(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0}, 2)
	f.Fuzz(func(t *testing.T, b []byte, gran int) {
		gran = gran%100 + 1
		if gran <= 0 {
			gran += 100
		}
		pos := 0
		for _, r := range Runs(b, gran) {
			if r.Off != pos || r.Len <= 0 || r.Zero != isZero(b[r.Off:r.Off+r.Len]) && r.Zero {
				t.Fatalf("Runs(%x, %d): bad run %+v at %d", b, gran, r, pos)
			}
			pos += r.Len
		}
		if pos != len(b) {
			t.Fatalf("Runs(%x, %d) covers %d bytes", b, gran, pos)
		}
	})
}

func FuzzClientDecoders(f *testing.F) {
	f.Add(OptionReply(OptInfo, RepInfo, InfoExportData(1<<20, 3))[:20])
	f.Add(InfoExportData(1<<20, 3))
	f.Add(InfoBlockSizeData(1, 4096, 1<<25))
	f.Add(ServerData("disk", "the disk"))
	f.Add(Greeting(3))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseOptionReply(b)
		_, _ = ParseGreeting(b)
		_, _, _ = ParseServerData(b)
		var in Info
		_ = ParseInfo(b, &in)
	})
}

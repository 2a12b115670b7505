package proto

// ExportState is what Check needs to know of an export and a connection.
type ExportState struct {
	Size        uint64
	ReadOnly    bool
	Structured  bool // structured replies were negotiated
	MetaContext bool // base:allocation was selected
}

// allowedFlags are the command flags each command takes.
var allowedFlags = map[uint16]uint16{
	CmdRead:        CmdFlagFUA | CmdFlagDF,
	CmdWrite:       CmdFlagFUA,
	CmdDisc:        0,
	CmdFlush:       0,
	CmdTrim:        CmdFlagFUA,
	CmdWriteZeroes: CmdFlagFUA | CmdFlagNoHole,
	CmdBlockStatus: CmdFlagReqOne,
}

// Check decides whether request q may run on export e: 0, or the error
// to answer with and why. Its rules, from proto.md "Request types" and
// "Error values": an unknown command or flag is EINVAL; a change to a
// read-only export EPERM; a write, trim or zeroing past the end ENOSPC,
// a read or block status past the end EINVAL; a READ over MaxPayload
// EOVERFLOW, a WRITE over it EINVAL (its data is still read off the
// wire); BLOCK_STATUS without a negotiated meta context, or of length 0,
// EINVAL; DF without structured replies EINVAL; a FLUSH or DISC with an
// offset or length EINVAL.
func Check(q Request, e ExportState) (Errno, string) {
	allowed, ok := allowedFlags[q.Type]
	if !ok {
		return EINVAL, "unknown command"
	}
	if q.Flags&^allowed != 0 {
		return EINVAL, "command flags not valid for this command"
	}
	if q.Flags&CmdFlagDF != 0 && !e.Structured {
		return EINVAL, "DF needs structured replies"
	}
	end, over := q.Offset+uint64(q.Length), q.Offset+uint64(q.Length) < q.Offset
	past := over || end > e.Size
	switch q.Type {
	case CmdDisc, CmdFlush:
		if q.Offset != 0 || q.Length != 0 {
			return EINVAL, "offset and length must be 0"
		}
	case CmdRead:
		if q.Length > MaxPayload {
			return EOVERFLOW, "read larger than the maximum block size"
		}
		if past {
			return EINVAL, "read past the end of the export"
		}
	case CmdWrite, CmdTrim, CmdWriteZeroes:
		if e.ReadOnly {
			return EPERM, "the export is read-only"
		}
		if q.Type == CmdWrite && q.Length > MaxPayload {
			return EINVAL, "write larger than the maximum block size"
		}
		if past {
			return ENOSPC, "write past the end of the export"
		}
	case CmdBlockStatus:
		if !e.MetaContext {
			return EINVAL, "no meta context was negotiated"
		}
		if q.Length == 0 {
			return EINVAL, "block status of length 0"
		}
		if past {
			return EINVAL, "block status past the end of the export"
		}
	}
	return 0, ""
}

// Run is a part of a read buffer: data, or zeros to send as a hole.
type Run struct {
	Off, Len int
	Zero     bool
}

// Runs splits buf into runs of data and of zeros, deciding per block of
// gran bytes (the last may be shorter) and merging neighbours of a kind,
// so that a READ's structured reply sends zero blocks as holes.
func Runs(buf []byte, gran int) []Run {
	if gran <= 0 {
		gran = len(buf)
	}
	var out []Run
	for off := 0; off < len(buf); off += gran {
		n := min(gran, len(buf)-off)
		z := isZero(buf[off : off+n])
		if k := len(out) - 1; k >= 0 && out[k].Zero == z {
			out[k].Len += n
			continue
		}
		out = append(out, Run{Off: off, Len: n, Zero: z})
	}
	return out
}

func isZero(b []byte) bool {
	for len(b) >= 8 {
		if b[0]|b[1]|b[2]|b[3]|b[4]|b[5]|b[6]|b[7] != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Span is a run of an export's bytes.
type Span struct {
	Off, Len uint64
}

// AllocationExtents answers a base:allocation block status of [off,
// off+length) from the spans that hold data (sorted, not overlapping):
// descriptors that cover the range in order, data (flags 0) and holes
// (StateHole|StateZero) alternating; with reqOne, only the first. Each
// descriptor stays below 4 GiB; the caller keeps length under that.
func AllocationExtents(off, length uint64, data []Span, reqOne bool) []Extent {
	var out []Extent
	add := func(n uint64, flags uint32) {
		if n == 0 {
			return
		}
		if k := len(out) - 1; k >= 0 && out[k].Flags == flags {
			out[k].Length += uint32(n)
			return
		}
		out = append(out, Extent{Length: uint32(n), Flags: flags})
	}
	pos, end := off, off+length
	for _, s := range data {
		s0, s1 := max(s.Off, pos), min(s.Off+s.Len, end)
		if s0 >= s1 {
			continue
		}
		add(s0-pos, StateHole|StateZero)
		add(s1-s0, 0)
		pos = s1
	}
	add(end-pos, StateHole|StateZero)
	if reqOne && len(out) > 1 {
		out = out[:1]
	}
	return out
}

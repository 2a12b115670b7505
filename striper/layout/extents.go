package layout

// Piece is one contiguous run of bytes that is contiguous both in the file
// and in one object: at most one stripe unit.
type Piece struct {
	ObjectNo  uint64 // the object's number
	ObjectOff uint64 // offset in the object
	FileOff   uint64 // offset in the file
	Length    uint64
}

// BufferExtent is a run of a caller's buffer, by offset from the start of
// the file range mapped.
type BufferExtent struct {
	Offset, Length uint64
}

// ObjectExtent is the part of a file range that falls in one object: a
// contiguous range of the object (Offset, Length) and, in order, the runs
// of the caller's buffer that fill it (their lengths add up to Length).
type ObjectExtent struct {
	ObjectNo uint64
	Offset   uint64
	Length   uint64
	Buffer   []BufferExtent
}

// Locate maps one file offset to its object and the offset in it, and
// returns how many bytes from there stay in the same stripe unit.
func (l Layout) Locate(off uint64) (objectNo, objectOff, unitLeft uint64) {
	su, sc, spo := uint64(l.StripeUnit), uint64(l.StripeCount), l.stripesPerObject()
	block := off / su
	stripe := block / sc
	pos := block % sc
	objectSet := stripe / spo
	objectNo = objectSet*sc + pos
	inUnit := off % su
	objectOff = (stripe%spo)*su + inUnit
	return objectNo, objectOff, su - inUnit
}

// Pieces returns the pieces of file range [off, off+length) in file
// order, each within one stripe unit. The layout must be valid.
func (l Layout) Pieces(off, length uint64) []Piece {
	var out []Piece
	for length > 0 {
		no, ooff, left := l.Locate(off)
		n := min(left, length)
		out = append(out, Piece{ObjectNo: no, ObjectOff: ooff, FileOff: off, Length: n})
		off += n
		length -= n
	}
	return out
}

// FileToExtents maps file range [off, off+length) to object extents, as
// Ceph's Striper::file_to_extents does: one extent per object touched,
// in the order the range first reaches each object, the pieces of an
// object merged when they are adjacent in it (a range longer than a
// stripe reaches each object several times, one stripe unit further each
// time). The layout must be valid.
func (l Layout) FileToExtents(off, length uint64) []ObjectExtent {
	var out []ObjectExtent
	index := map[uint64]int{}
	for _, p := range l.Pieces(off, length) {
		buf := BufferExtent{Offset: p.FileOff - off, Length: p.Length}
		if i, ok := index[p.ObjectNo]; ok {
			x := &out[i]
			if x.Offset+x.Length == p.ObjectOff {
				x.Length += p.Length
				last := &x.Buffer[len(x.Buffer)-1]
				if last.Offset+last.Length == buf.Offset {
					last.Length += buf.Length
				} else {
					x.Buffer = append(x.Buffer, buf)
				}
				continue
			}
		}
		index[p.ObjectNo] = len(out)
		out = append(out, ObjectExtent{ObjectNo: p.ObjectNo, Offset: p.ObjectOff, Length: p.Length, Buffer: []BufferExtent{buf}})
	}
	return out
}

// FileOffset is the reverse of Locate: the file offset of byte objectOff
// of object objectNo.
func (l Layout) FileOffset(objectNo, objectOff uint64) uint64 {
	su, sc, spo := uint64(l.StripeUnit), uint64(l.StripeCount), l.stripesPerObject()
	objectSet := objectNo / sc
	pos := objectNo % sc
	stripe := objectSet*spo + objectOff/su
	block := stripe*sc + pos
	return block*su + objectOff%su
}

// ObjectToFile maps object range [objectOff, objectOff+length) of object
// objectNo to the file ranges it holds, in object order (which is file
// order), as Ceph's Striper::extent_to_file does.
func (l Layout) ObjectToFile(objectNo, objectOff, length uint64) []Piece {
	su := uint64(l.StripeUnit)
	var out []Piece
	for length > 0 {
		n := min(su-objectOff%su, length)
		out = append(out, Piece{ObjectNo: objectNo, ObjectOff: objectOff, FileOff: l.FileOffset(objectNo, objectOff), Length: n})
		objectOff += n
		length -= n
	}
	return out
}

// ObjectLen is how many bytes of object objectNo lie below file size
// size: the length the object has when a file of that size is written
// from start to end (a sparse file's objects may be shorter or missing).
// Truncating a file to size cuts each object to ObjectLen.
func (l Layout) ObjectLen(size, objectNo uint64) uint64 {
	su, sc, spo := uint64(l.StripeUnit), uint64(l.StripeCount), l.stripesPerObject()
	full, rem := size/su, size%su // whole stripe units, and the bytes of the partial one
	set, pos := objectNo/sc, objectNo%sc
	// The object's k-th unit is file block (set·spo + k)·sc + pos. The
	// blocks below full in its column pos are those of stripes below
	// ceil((full-pos)/sc).
	var stripesBelow uint64
	if full > pos {
		stripesBelow = (full - pos + sc - 1) / sc
	}
	first := set * spo // the object's first stripe
	if stripesBelow <= first {
		if stripesBelow == first && rem > 0 && first*sc+pos == full {
			return rem
		}
		return 0
	}
	k := min(stripesBelow-first, spo)
	n := k * su
	if k < spo && rem > 0 && (first+k)*sc+pos == full {
		n += rem
	}
	return n
}

// ObjectCount is how many objects, numbered from 0, may hold bytes of a
// file of size size: every object numbered ObjectCount or more has
// ObjectLen 0. Removing a file removes objects 0 to ObjectCount-1.
func (l Layout) ObjectCount(size uint64) uint64 {
	if size == 0 {
		return 0
	}
	su, sc, spo := uint64(l.StripeUnit), uint64(l.StripeCount), l.stripesPerObject()
	lastBlock := (size - 1) / su
	set := lastBlock / (sc * spo)
	inSet := lastBlock - set*sc*spo // blocks of the last set before the last one
	return set*sc + min(sc, inSet+1)
}

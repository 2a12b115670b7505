package osdmon

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// parseOSDID reads "3" or "osd.3".
func parseOSDID(s string) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "osd."), 10, 32)
	if err != nil || n < 0 || n >= osdmap.MaxOSDs {
		return 0, moncmd.BadArgf("%q is not an osd id", s)
	}
	return int32(n), nil
}

// osdID reads a required OSD id argument.
func osdID(c moncmd.Command, name string) (int32, error) {
	v, err := c.Str(name)
	if err != nil {
		return 0, err
	}
	return parseOSDID(v)
}

// osdIDs reads a list of OSD ids separated by commas or spaces ("1,2",
// "osd.1 osd.2"), sorted and without duplicates.
func osdIDs(c moncmd.Command, name string) ([]int32, error) {
	v, err := c.Str(name)
	if err != nil {
		return nil, err
	}
	var ids []int32
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		id, err := parseOSDID(f)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, moncmd.BadArgf("%s: no osd ids in %q", c.Prefix, v)
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// joinIDs formats ids for an "ids" argument.
func joinIDs(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, ",")
}

// osdNames formats ids as "osd.1, osd.2".
func osdNames(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("osd.%d", id)
	}
	return strings.Join(parts, ", ")
}

// unitWeight reads a weight in [0, 1] as 16.16 fixed point.
func unitWeight(c moncmd.Command, name string) (uint32, error) {
	f, err := c.Float(name)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(f) || f < 0 || f > 1 {
		return 0, moncmd.BadArgf("%s: %s %v out of [0, 1]", c.Prefix, name, f)
	}
	return uint32(math.Round(f * 0x10000)), nil
}

// maxCrushWeight bounds a device's CRUSH weight, so sums stay in 16.16.
const maxCrushWeight = 1 << 12

// crushWeight reads a CRUSH weight (>= 0, a device's capacity in TiB by
// convention) as 16.16 fixed point.
func crushWeight(c moncmd.Command, name string, def float64) (uint32, error) {
	f := def
	if c.Has(name) {
		var err error
		if f, err = c.Float(name); err != nil {
			return 0, err
		}
	}
	if math.IsNaN(f) || f < 0 || f > maxCrushWeight {
		return 0, moncmd.BadArgf("%s: %s %v out of [0, %d]", c.Prefix, name, f, maxCrushWeight)
	}
	return uint32(math.Round(f * crush.WeightOne)), nil
}

// parseUUID checks a UUID and returns it in lowercase canonical form.
func parseUUID(s string) (string, error) {
	var b [16]byte
	if err := decodeUUID(s, &b); err != nil {
		return "", err
	}
	return osdmap.FSID(b).String(), nil
}

func decodeUUID(s string, b *[16]byte) error {
	h := strings.ReplaceAll(s, "-", "")
	if len(s) != 36 || len(h) != 32 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return moncmd.BadArgf("%q is not a uuid", s)
	}
	for i := range b {
		v, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		if err != nil {
			return moncmd.BadArgf("%q is not a uuid", s)
		}
		b[i] = byte(v)
	}
	return nil
}

// ParseFSID parses a cluster fsid in UUID form.
func ParseFSID(s string) (osdmap.FSID, error) {
	var f osdmap.FSID
	err := decodeUUID(s, (*[16]byte)(&f))
	return f, err
}

// fixed formats a 16.16 value as Ceph prints weights: 5 decimals.
func fixed(w uint32) string { return strconv.FormatFloat(float64(w)/0x10000, 'f', 5, 64) }

// toFloat converts a 16.16 value for JSON.
func toFloat(w uint32) float64 { return float64(w) / 0x10000 }

// bad is an EINVAL reply from an argument error.
func bad(err error) ([]byte, moncmd.Reply) { return nil, moncmd.FromError(err, moncmd.EINVAL) }

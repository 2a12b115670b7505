package crushtext

import (
	"errors"
	"math"
	"strconv"
)

// errRange and errSyntax classify number errors; the parser turns them into
// SyntaxErrors at the number's token.
var (
	errSyntax = errors.New("crushtext: malformed number")
	errRange  = errors.New("crushtext: number out of range")
)

// parseInt parses a decimal integer with an optional '-' (Ceph's "integer"
// rule: no '+', no hex) and checks it lies in [lo, hi].
func parseInt(s string, lo, hi int64) (int64, error) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" {
		return 0, errSyntax
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, errSyntax
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, errRange
	}
	return v, nil
}

// parseChooseArgsIndex parses a choose_args index. Ceph keys them by a
// 64-bit unsigned number and prints the compat set, -1, as
// 18446744073709551615; both spellings are accepted.
func parseChooseArgsIndex(s string) (int64, error) {
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return int64(u), nil
	}
	return parseInt(s, math.MinInt64, math.MaxInt64)
}

// isReal reports whether s matches Spirit's real_p as Ceph's grammar uses
// it: [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?.
func isReal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	mant := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, mant = i+1, mant+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, mant = i+1, mant+1
		}
	}
	if mant == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// ParseWeight converts a weight as written in the text form to CRUSH's
// 16.16 fixed point exactly as Ceph's compiler does:
// (unsigned)(strtof(s) * (float)0x10000), in float32 and truncating, so
// 3.7 -> 242483, 0.1 -> 6553 and 0.001 -> 65.
//
// Ceph converts the float to unsigned through a 64-bit integer (x86-64), so
// a negative weight wraps around: "-25536.000", which is what crushtool
// prints for a weight of 40000 (it formats weights as signed 32-bit
// numbers), reads back as 40000. Values that do not fit are errors.
func ParseWeight(s string) (uint32, error) {
	if !isReal(s) {
		return 0, errSyntax
	}
	f, err := strconv.ParseFloat(s, 32) // correctly rounded to float32, like strtof
	if err != nil {
		return 0, errRange
	}
	v := float32(f) * float32(0x10000)
	// Below -2^31 no printed weight goes, and beyond 2^32 none fits.
	if v >= 1<<32 || v < -(1<<31) {
		return 0, errRange
	}
	return uint32(int64(v)), nil
}

// FormatWeight formats a 16.16 weight as crushtool does: "%.3f" of the
// weight taken as a signed 32-bit number and divided in float32.
func FormatWeight(w uint32) string {
	return string(appendWeight(nil, w))
}

func appendWeight(b []byte, w uint32) []byte {
	f := float32(int32(w)) / float32(0x10000)
	return strconv.AppendFloat(b, float64(f), 'f', 3, 64)
}

// plainWeight formats a 16.16 weight for messages, unsigned and without
// crushtool's float32 rounding.
func plainWeight(w uint32) string {
	return strconv.FormatFloat(float64(w)/0x10000, 'f', 3, 64)
}

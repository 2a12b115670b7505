package crushtext

import (
	"bytes"
	"strings"
	"testing"
)

// TestParseWeightFloat32 checks the conversion Ceph's compiler does:
// (unsigned)(strtof(s) * (float)0x10000), truncating in float32. The
// expected values are those crushtool --dump shows (vectors README, item 2).
func TestParseWeightFloat32(t *testing.T) {
	tests := []struct {
		in   string
		want uint32
	}{
		{"3.7", 242483}, // float64 would give 242483 too, but:
		{"0.1", 6553},   // 6553.6 truncated
		{"0.001", 65},   // 65.536 truncated
		{"1", 0x10000},
		{"1.000", 0x10000},
		{"0.5", 0x8000},
		{".5", 0x8000},
		{"1.", 0x10000},
		{"+2", 0x20000},
		{"1e2", 100 << 16},
		{"0", 0},
		{"-0", 0},
		{"1e-30", 0},
		{"7.25", 475136},
		{"0.01", 655},
		{"4.2", 275251}, // float32(4.2)*65536 = 275251.19
		// Negative weights wrap around through a 64-bit integer, as in
		// Ceph on x86-64; this is how crushtool's own negative output
		// for weights of 32768 and more reads back.
		{"-25536.000", 40000 << 16},
		{"-32768", 1 << 31},
		{"65535.99", 4294966528}, // float32(65535.99) = 65535.98828125
	}
	for _, tc := range tests {
		got, err := ParseWeight(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseWeight(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "x", "1x", "1e", "e5", ".", "-", "nan", "inf", "0x10", "1e39", "65536", "-32769"} {
		if w, err := ParseWeight(bad); err == nil {
			t.Errorf("ParseWeight(%q) = %d, want an error", bad, w)
		}
	}
}

// TestFormatWeightSigned checks that weights print as crushtool prints
// them: %.3f of the weight as a signed 32-bit number over 0x10000 in float32.
func TestFormatWeightSigned(t *testing.T) {
	tests := []struct {
		in   uint32
		want string
	}{
		{0x10000, "1.000"},
		{242483, "3.700"},
		{65, "0.001"},
		{4096, "0.062"}, // 0.0625: ties round to even, as glibc's printf
		{40000 << 16, "-25536.000"},
		{1 << 31, "-32768.000"},
		{0xffffffff, "-0.000"},
	}
	for _, tc := range tests {
		if got := FormatWeight(tc.in); got != tc.want {
			t.Errorf("FormatWeight(%d) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestWeightPrintingIsStable checks that a printed weight reads back to a
// weight that prints the same, for a spread of weights.
func TestWeightPrintingIsStable(t *testing.T) {
	for w := uint64(0); w <= 0xffffffff; w += 0xffff_ffff/100003 + 7 {
		s := FormatWeight(uint32(w))
		back, err := ParseWeight(s)
		if err != nil {
			t.Fatalf("weight %d printed as %s does not parse: %v", w, s, err)
		}
		if again := FormatWeight(back); again != s && s != "-0.000" {
			t.Fatalf("weight %d prints as %s, reads back as %d, which prints as %s", w, s, back, again)
		}
	}
}

// TestHeavyBucketItemRoundTrips checks a bucket item of weight 40000:
// crushtool prints it as -25536.000 and that compiles back to 40000.
func TestHeavyBucketItemRoundTrips(t *testing.T) {
	src := []byte(header + hostH0 + "root r {\n\tid -1\n\talg straw2\n\titem h0 weight 40000\n}\n")
	m, err := Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	if w := m.Bucket(-1).Weights[0]; w != 40000<<16 {
		t.Fatalf("weight %d, want %d", w, 40000<<16)
	}
	text := Decompile(m)
	if !bytes.Contains(text, []byte("\titem h0 weight -25536.000\n")) {
		t.Fatalf("heavy item not printed as crushtool does:\n%s", text)
	}
	m2, err := Compile(text)
	if err != nil {
		t.Fatal(err)
	}
	if w := m2.Bucket(-1).Weights[0]; w != 40000<<16 {
		t.Errorf("recompiled weight %d, want %d", w, 40000<<16)
	}
	if !strings.Contains(string(Decompile(m2)), "# weight -25536.000") {
		t.Errorf("root weight not printed signed")
	}
}

package cmdutil

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{
		"0": 0, "512": 512, "64K": 64 << 10, "64k": 64 << 10, "64KiB": 64 << 10, "64KB": 64 << 10, "10G": 10 << 30,
		"1.5G": 3 << 29, "2T": 2 << 40, "1P": 1 << 50, "4096B": 4096, " 8M ": 8 << 20,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "-1G", "1.1", "10X", "1iB", "99999999999P", "0.3K", "1..5G"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
	for n, want := range map[uint64]string{0: "0 B", 100: "100 B", 64 << 10: "64 KiB", 3 << 29: "1.5 GiB", 10 << 30: "10 GiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

package pgmon

import "testing"

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 2355: "2.3 KiB", 10 << 10: "10 KiB",
		1<<30 - 4096: "1.0 GiB", 91 << 20: "91 MiB", 10239: "10 KiB", 30 << 30: "30 GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

package mdtypes

import "testing"

// The cost of a primary dentry of a typical file: its omap value's bytes
// (which a fragment read moves per entry) and the time to decode it.
func BenchmarkPrimaryDentryDecode(b *testing.B) {
	in := sampleFile()
	in.Xattrs = nil
	d := &Dentry{Name: "file-000123.dat", Version: 12, Inode: in}
	raw := d.MarshalValue()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := UnmarshalDentry(d.Name, raw); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(raw)), "value-bytes")
}

func BenchmarkPrimaryDentryEncode(b *testing.B) {
	in := sampleFile()
	in.Xattrs = nil
	d := &Dentry{Name: "file-000123.dat", Version: 12, Inode: in}
	b.ReportAllocs()
	for b.Loop() {
		d.MarshalValue()
	}
}

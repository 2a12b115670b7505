package s3gw

import (
	"bytes"
	"testing"
)

// FuzzXMLBodies: the request bodies the gateway parses never panic it,
// and what they do not parse is MalformedXML (or too long).
func FuzzXMLBodies(f *testing.F) {
	f.Add([]byte(`<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object></Delete>`))
	f.Add([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>`))
	f.Add([]byte(`<CreateBucketConfiguration><LocationConstraint>eu</LocationConstraint></CreateBucketConfiguration>`))
	f.Add([]byte(`<Delete><Object><Key>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range []any{&deleteRequest{}, &completeMultipartUpload{}, &createBucketConfiguration{}} {
			err := decodeXML(bytes.NewReader(b), v)
			if err != nil {
				if c := translate(err).Code; c != "MalformedXML" && c != "MaxMessageLengthExceeded" {
					t.Fatalf("%q: %v -> %s", b, err, c)
				}
			}
		}
	})
}

func FuzzRange(f *testing.F) {
	f.Add("bytes=0-4", int64(10))
	f.Add("bytes=-3", int64(2))
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			return
		}
		off, n, ok, err := parseRange(h, size)
		if ok && err == nil && (off < 0 || n <= 0 || off+n > size) {
			t.Fatalf("%q of %d: [%d,+%d)", h, size, off, n)
		}
	})
}

package sigv4

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The S3 developer guide's Signature Version 2 examples ("Signing and
// authenticating REST requests", Examples: Object GET, Object PUT), on a
// virtual-host-style bucket johnsmith.
func TestV2Examples(t *testing.T) {
	host := WithHostBucket(func(*http.Request) string { return "johnsmith" })
	for _, c := range []struct {
		method, target, date, ctype, sig string
	}{
		{"GET", "/photos/puppy.jpg", "Tue, 27 Mar 2007 19:36:42 +0000", "", "bWq2s1WEIj+Ydj0vQ697zp+IXMU="},
		{"PUT", "/photos/puppy.jpg", "Tue, 27 Mar 2007 21:15:45 +0000", "image/jpeg", "MyyxeRY7whkBe+bq8fHCL/2kKUg="},
	} {
		at, _ := parseHTTPDate(c.date)
		v := New(lookup, func() time.Time { return at }, host)
		r := httptest.NewRequest(c.method, c.target, nil)
		r.Host = "johnsmith.s3.amazonaws.com"
		r.Header.Set("Date", c.date)
		if c.ctype != "" {
			r.Header.Set("Content-Type", c.ctype)
		}
		r.Header.Set("Authorization", "AWS "+testAK+":"+c.sig)
		res, err := v.Verify(context.Background(), r)
		if err != nil || res.AccessKey != testAK {
			t.Errorf("%s %s: %v", c.method, c.target, err)
		}
		r.Header.Set("Authorization", "AWS "+testAK+":AAAA"+c.sig[4:])
		if _, err := v.Verify(context.Background(), r); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s %s with a wrong signature: %v", c.method, c.target, err)
		}
		if _, err := New(lookup, func() time.Time { return at.Add(time.Hour) }, host).Verify(context.Background(), r); !errors.Is(err, ErrSkewed) {
			t.Errorf("an hour late: %v", err)
		}
	}
}

func TestV2Query(t *testing.T) {
	now := time.Unix(1175139620, 0)
	r := httptest.NewRequest("GET", "/johnsmith/photos/puppy.jpg?AWSAccessKeyId="+testAK+"&Expires=1175139620&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D", nil)
	r.Host = "s3.amazonaws.com"
	// The guide's query example signs "GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg".
	if got := stringToSignV2(r, "1175139620", ""); got != "GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg" {
		t.Fatalf("string to sign %q", got)
	}
	if _, err := New(lookup, func() time.Time { return now }).Verify(context.Background(), r); err != nil {
		t.Fatalf("query: %v", err)
	}
	if _, err := New(lookup, func() time.Time { return now.Add(time.Second) }).Verify(context.Background(), r); !errors.Is(err, ErrExpired) {
		t.Fatalf("expired query: %v", err)
	}
}

package s3gw

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
)

// Access logs: one JSON line per request with its time, remote address,
// user and key, request id, method, bucket, key, operation, status,
// error code, bytes each way and total time — for successes, S3 errors,
// anonymous and unauthenticated requests alike.
func TestAccessLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		var buf bytes.Buffer
		e.gw.cfg.AccessLog = NewAccessLog(&buf)
		e.ok(req{method: "PUT", target: "/alog"})
		put := e.ok(req{method: "PUT", target: "/alog/a/b", body: []byte("hello")})
		e.ok(req{method: "GET", target: "/alog/a/b"})
		e.want(e.do(req{method: "GET", target: "/alog/nope"}), 404, "NoSuchKey")
		e.want(e.do(req{method: "GET", target: "/alog/a/b", anonymous: true}), 403, "AccessDenied")
		e.ok(req{method: "GET", target: "/alog?versioning"})
		e.ok(req{method: "HEAD", target: "/alog/a/b"})
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if len(lines) != 7 {
			t.Fatalf("%d lines, want 7:\n%s", len(lines), buf.String())
		}
		recs := make([]AccessRecord, len(lines))
		for i, l := range lines {
			if err := json.Unmarshal([]byte(l), &recs[i]); err != nil {
				t.Fatalf("line %d %q: %v", i, l, err)
			}
		}
		want := []struct {
			op, key, code string
			status        int
			sent, recv    int64
		}{
			{"REST.PUT.BUCKET", "", "", 200, 0, 0},
			{"REST.PUT.OBJECT", "a/b", "", 200, 0, 5},
			{"REST.GET.OBJECT", "a/b", "", 200, 5, 0},
			{"REST.GET.OBJECT", "nope", "NoSuchKey", 404, -1, 0},
			{"REST.GET.OBJECT", "a/b", "AccessDenied", 403, -1, 0},
			{"REST.GET.VERSIONING", "", "", 200, -1, 0},
			{"REST.HEAD.OBJECT", "a/b", "", 200, 0, 0},
		}
		for i, w := range want {
			r := recs[i]
			if r.Operation != w.op || r.Key != w.key || r.ErrorCode != w.code || r.Status != w.status || r.Bucket != "alog" || r.Method != strings.Split(w.op, ".")[1] ||
				r.BytesReceived != w.recv || (w.sent >= 0 && r.BytesSent != w.sent) || (w.sent < 0 && r.BytesSent == 0) ||
				r.RequestID == "" || r.Remote == "" || r.Time.IsZero() || r.TotalMillis < 0 {
				t.Errorf("line %d: %+v, want %+v", i, r, w)
			}
			if anon := w.code == "AccessDenied"; (r.User == "") != anon || (r.AccessKey == "") != anon {
				t.Errorf("line %d: user %q key %q", i, r.User, r.AccessKey)
			}
		}
		if recs[1].RequestID != put.Header().Get("x-amz-request-id") || recs[1].User != "alice" || recs[1].AccessKey != e.alice.AccessKeyID {
			t.Errorf("the PUT's line: %+v", recs[1])
		}
	})
}

// An access log file is appended to, and Reopen (SIGHUP in cuttle s3
// serve) starts a new file where logrotate moved the old one away.
func TestAccessLogReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	if err := os.WriteFile(path, []byte("earlier\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	l, err := OpenAccessLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Write(AccessRecord{RequestID: "one"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(AccessRecord{RequestID: "two"}); err != nil { // still the moved file
		t.Fatal(err)
	}
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(AccessRecord{RequestID: "three"}); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(old), "earlier\n") || !strings.Contains(string(old), `"request_id":"one"`) || !strings.Contains(string(old), `"request_id":"two"`) ||
		strings.Contains(string(old), "three") || strings.Count(string(cur), "\n") != 1 || !strings.Contains(string(cur), `"request_id":"three"`) {
		t.Fatalf("rotated: %q, current: %q", old, cur)
	}
	if _, err := OpenAccessLog(filepath.Join(dir, "no", "such", "dir")); err == nil {
		t.Fatal("a log in a missing directory opened")
	}
}

// operationName as a table: S3's REST.METHOD.RESOURCE.
func TestOperationName(t *testing.T) {
	for _, c := range []struct{ method, target, copySrc, want string }{
		{"GET", "/", "", "REST.GET.SERVICE"},
		{"GET", "/b", "", "REST.GET.BUCKET"},
		{"PUT", "/b?lifecycle", "", "REST.PUT.LIFECYCLE"},
		{"DELETE", "/b?cors", "", "REST.DELETE.CORS"},
		{"POST", "/b?delete", "", "REST.POST.DELETE"},
		{"GET", "/b?uploads", "", "REST.GET.UPLOADS"},
		{"POST", "/b/k?uploads", "", "REST.POST.UPLOADS"},
		{"PUT", "/b/k?partNumber=1&uploadId=x", "", "REST.PUT.UPLOAD"},
		{"PUT", "/b/k", "/a/b", "REST.PUT.COPY"},
		{"GET", "/b/k?acl", "", "REST.GET.ACL"},
		{"HEAD", "/b/k", "", "REST.HEAD.OBJECT"},
		{"PUT", "/b?object-lock", "", "REST.PUT.OBJECT_LOCK"},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		if c.copySrc != "" {
			r.Header.Set("X-Amz-Copy-Source", c.copySrc)
		}
		bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if got := operationName(r, bucket, key); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.method, c.target, got, c.want)
		}
	}
}

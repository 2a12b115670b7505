package s3gw

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Access logs (docs/S3.md, "Access logs"): one JSON line per request,
// written when its answer is done, to a file the operator names. The
// file is opened for appending and reopened by Reopen (cuttle s3 serve
// does it on SIGHUP), so logrotate can move it away and signal.

// AccessRecord is one request's line.
type AccessRecord struct {
	Time          time.Time `json:"time"` // when the request came
	Remote        string    `json:"remote"`
	User          string    `json:"user"`       // "" for an anonymous request
	AccessKey     string    `json:"access_key"` // "" for an anonymous request
	RequestID     string    `json:"request_id"`
	Method        string    `json:"method"`
	Bucket        string    `json:"bucket"`
	Key           string    `json:"key"`
	Operation     string    `json:"operation"` // REST.METHOD.RESOURCE, as S3's server access logs name them
	Status        int       `json:"status"`
	ErrorCode     string    `json:"error_code"` // the S3 error code, "" on success
	BytesSent     int64     `json:"bytes_sent"`
	BytesReceived int64     `json:"bytes_received"`
	TotalMillis   float64   `json:"total_ms"`
	UserAgent     string    `json:"user_agent"`
}

// AccessLog writes access records to a file (or a writer), one line
// each; safe for concurrent use.
type AccessLog struct {
	mu   sync.Mutex
	path string // "" for a writer that is not reopened
	f    *os.File
	out  io.Writer
}

// OpenAccessLog opens path for appending ("-": standard error).
func OpenAccessLog(path string) (*AccessLog, error) {
	if path == "-" {
		return NewAccessLog(os.Stderr), nil
	}
	l := &AccessLog{path: path}
	if err := l.Reopen(); err != nil {
		return nil, err
	}
	return l, nil
}

// NewAccessLog writes records to w (never reopened).
func NewAccessLog(w io.Writer) *AccessLog { return &AccessLog{out: w} }

// Reopen closes the file and opens path again (created if it was moved
// away); a writer's log does nothing.
func (l *AccessLog) Reopen() error {
	if l.path == "" {
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("s3 access log: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.f
	l.f, l.out = f, f
	if old != nil {
		_ = old.Close()
	}
	return nil
}

// Close closes the file.
func (l *AccessLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f, l.out = nil, io.Discard
	return err
}

// Write writes one record as a line.
func (l *AccessLog) Write(rec AccessRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.out.Write(b)
	return err
}

// operationName names a request's operation as S3's server access logs
// do: REST.METHOD.RESOURCE, the resource being the subresource the query
// names (ACL, LIFECYCLE, VERSIONING...), else UPLOAD(S) for multipart
// steps, else OBJECT, BUCKET or SERVICE.
func operationName(r *http.Request, bucket, key string) string {
	q := r.URL.Query()
	res := ""
	for _, sub := range []string{"acl", "policy", "policyStatus", "tagging", "cors", "lifecycle", "versioning", "location", "ownershipControls",
		"publicAccessBlock", "attributes", "versions", "delete", "website", "logging", "notification", "encryption", "replication", "object-lock"} {
		if _, ok := q[sub]; ok {
			res = strings.ToUpper(strings.ReplaceAll(sub, "-", "_"))
			break
		}
	}
	if res == "" {
		switch {
		case q.Has("uploadId"):
			res = "UPLOAD"
		case q.Has("uploads"):
			res = "UPLOADS"
		case key != "":
			res = "OBJECT"
			if r.Header.Get("X-Amz-Copy-Source") != "" && r.Method == http.MethodPut {
				res = "COPY"
			}
		case bucket != "":
			res = "BUCKET"
		default:
			res = "SERVICE"
		}
	}
	return "REST." + r.Method + "." + res
}

// countingWriter counts what an answer sends and keeps its status.
type countingWriter struct {
	http.ResponseWriter
	status int
	sent   int64
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(p)
	c.sent += int64(n)
	return n, err
}

// Flush passes a flush on, for answers that stream.
func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// countingBody counts what a request's body gives.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

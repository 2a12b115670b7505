package s3gw

import (
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
)

// Two gateways on the same pool (two RADOS clients) serve the same users,
// buckets and objects, and a bucket name raced for by two users on the
// two gateways goes to exactly one (issue 40: "Several gateways can serve
// the same buckets at once").
func TestTwoGateways(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		io2, err := e.c.Client("client.rgw2").OpenIOContext(DefaultPool)
		if err != nil {
			t.Fatal(err)
		}
		gw2, err := New(Config{IO: io2, Domain: "s3.test"})
		if err != nil {
			t.Fatal(err)
		}
		on := func(gw *Gateway, q req) *httptest.ResponseRecorder {
			saved := e.gw
			e.gw = gw
			defer func() { e.gw = saved }()
			return e.do(q)
		}
		gw1 := e.gw
		if w := on(gw1, req{method: "PUT", target: "/shared"}); w.Code != 200 {
			t.Fatalf("create on gw1: %d", w.Code)
		}
		if w := on(gw2, req{method: "PUT", target: "/shared/k", body: []byte("from gw2")}); w.Code != 200 {
			t.Fatalf("put on gw2: %d %s", w.Code, w.Body.String())
		}
		if w := on(gw1, req{method: "GET", target: "/shared/k"}); w.Code != 200 || w.Body.String() != "from gw2" {
			t.Fatalf("get on gw1: %d %q", w.Code, w.Body.String())
		}
		if w := on(gw1, req{method: "DELETE", target: "/shared/k"}); w.Code != 204 {
			t.Fatalf("delete on gw1: %d", w.Code)
		}
		if w := on(gw2, req{method: "DELETE", target: "/shared"}); w.Code != 204 {
			t.Fatalf("delete bucket on gw2: %d %s", w.Code, w.Body.String())
		}
		if w := on(gw1, req{method: "HEAD", target: "/shared"}); w.Code != 404 {
			t.Fatalf("head on gw1 after the delete on gw2: %d", w.Code)
		}

		// Alice on gw1 and Bob on gw2 create one name at once.
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for i, c := range []struct {
			gw *Gateway
			q  req
		}{{gw1, req{method: "PUT", target: "/contested"}}, {gw2, req{method: "PUT", target: "/contested", creds: &e.bob}}} {
			wg.Add(1)
			r := e.build(c.q)
			go func() {
				defer wg.Done()
				w := httptest.NewRecorder()
				c.gw.ServeHTTP(w, r)
				codes[i] = w.Code
			}()
		}
		wg.Wait()
		if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
			t.Fatalf("contested create: %v, want one 200 and one 409", codes)
		}
	})
}

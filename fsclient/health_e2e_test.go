package fsclient

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A client holding write caps goes silent while another's stat needs
// them revoked: health detail names it under MDS_CLIENT_LATE_RELEASE
// (half the revoke timeout after the revoke) before the revoke timeout
// fences it, the waiting stat is a slow request (MDS_SLOW_REQUEST), and
// both checks clear once the silent client is fenced and the stat
// answered. fs status shows the rank's clients and requests in flight.
func TestE2EHealthLateReleaseAndSlowRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		a, conn := fc.mount("client.a")
		b, _ := fc.mount("client.b")
		ctx := context.Background()
		f, err := a.Create(ctx, "/f", 0o666)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(ctx, []byte("buffered on a")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // virtual time: a beacon with the sessions
		if st := fc.c.Run("fs status").Text; !regexp.MustCompile(`0 +active +a +\S+ +\S+ +2 +0\n`).MatchString(st) {
			t.Fatalf("fs status before: want 2 clients, 0 requests:\n%s", st)
		}

		fc.c.Net.Freeze("client.a")
		start := time.Now()
		statDone := make(chan error, 1)
		go func() {
			_, err := b.Stat(ctx, "/f") // needs a's buffered writes revoked
			statDone <- err
		}()
		lateRe := regexp.MustCompile(`mds\.a\(mds\.0\): Client \S*client\.a failing to respond to capability release client_id: \d+`)
		var sawLate, sawSlow, sawReqs bool
		for answered := false; !answered; {
			select {
			case err := <-statDone:
				if err != nil {
					t.Fatalf("b's stat: %v", err)
				}
				answered = true
				continue
			default:
			}
			if time.Since(start) > 10*time.Minute {
				t.Fatalf("b's stat not answered after 10 min; saw late release %v, slow request %v", sawLate, sawSlow)
			}
			h := fc.c.Run("health", "detail", "true").Text
			if lateRe.MatchString(h) && strings.Contains(h, "1 clients failing to respond to capability release") {
				if !sawLate {
					t.Logf("after %v:\n%s", time.Since(start).Round(time.Second), h)
				}
				sawLate = true
				if fc.c.Map().IsBlocklisted(conn.Instance(), time.Now()) {
					t.Fatalf("client.a already fenced while named as late:\n%s", h)
				}
				if time.Since(start) < 25*time.Second {
					t.Fatalf("client.a named late %v after the revoke, before half the revoke timeout:\n%s", time.Since(start), h)
				}
			}
			if strings.Contains(h, "mds.a(mds.0): 1 slow requests are blocked > 30 secs") && strings.Contains(h, "1 MDSs report slow requests") {
				sawSlow = true
			}
			if !sawReqs && regexp.MustCompile(`0 +active +a +\S+ +\S+ +2 +1\n`).MatchString(fc.c.Run("fs status").Text) {
				sawReqs = true
			}
			time.Sleep(time.Second) // virtual time: the beacons' pace
		}
		if !sawLate || !sawSlow || !sawReqs {
			t.Fatalf("while b's stat waited: late release %v, slow request %v, fs status's request %v", sawLate, sawSlow, sawReqs)
		}
		if !fc.c.Map().IsBlocklisted(conn.Instance(), time.Now()) {
			t.Fatal("b's stat answered but client.a is not fenced")
		}
		for i := 0; ; i++ {
			h := fc.c.Run("health", "detail", "true").Text
			if !strings.Contains(h, "MDS_CLIENT_LATE_RELEASE") && !strings.Contains(h, "MDS_SLOW_REQUEST") {
				break
			}
			if i == 30 {
				t.Fatalf("the checks did not clear after the fence:\n%s", h)
			}
			time.Sleep(time.Second) // virtual time: the beacons' pace
		}
		fc.c.Net.Thaw("client.a")
	})
}

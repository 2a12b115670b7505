package daemoncmd

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/launcher"
)

// An OSD counts as up only at its own address.
func TestOSDsUp(t *testing.T) {
	osds := []launcher.Daemon{{Kind: launcher.KindOSD, ID: "0", Addr: "127.0.0.1:7501"}, {Kind: launcher.KindOSD, ID: "1", Addr: "127.0.0.1:7502"}}
	dump := func(osds string) []byte { return []byte(`{"epoch":9,"osds":[` + osds + `]}`) }
	if err := osdsUp(dump(`{"osd":0,"up":true,"addr":"127.0.0.1:7501"},{"osd":1,"up":true,"addr":"127.0.0.1:7502"}`), osds); err != nil {
		t.Errorf("all up: %v", err)
	}
	err := osdsUp(dump(`{"osd":0,"up":true,"addr":"127.0.0.1:9999"},{"osd":1,"up":false,"addr":"127.0.0.1:7502"}`), osds)
	if err == nil || !strings.Contains(err.Error(), "osd.0, osd.1 not up") {
		t.Errorf("one elsewhere, one down: %v", err)
	}
	if err := osdsUp([]byte("x"), osds); err == nil {
		t.Error("a reply that is not JSON")
	}
}

// A daemon's uuid is a well-formed UUID, the same for the same cluster
// and name, different otherwise.
func TestNameUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a := nameUUID("fsid", "osd.0")
	if !re.MatchString(a) || a != nameUUID("fsid", "osd.0") || a == nameUUID("fsid", "osd.1") || a == nameUUID("other", "osd.0") {
		t.Errorf("nameUUID: %s", a)
	}
}

// A cluster with MDS daemons is told how to see its file system and
// mount it, and counts as up only once a rank is active.
func TestNextStepsWithFS(t *testing.T) {
	c := &launcher.Cluster{Dir: "/d", Conf: "/d/cuttle.conf", Keyring: "/d/admin.keyring", Daemons: []launcher.Daemon{
		{Kind: launcher.KindMon, ID: "a"}, {Kind: launcher.KindOSD, ID: "0"}, {Kind: launcher.KindMDS, ID: "a"}, {Kind: launcher.KindMDS, ID: "b"}}}
	got := nextSteps(c, "/d", "cuttle", nil, nil)
	for _, want := range []string{"cuttle fs status", "cuttle mount /mnt/cuttle", "# mount it"} {
		if !strings.Contains(got, want) {
			t.Errorf("next steps lack %q:\n%s", want, got)
		}
	}
	c.Daemons = c.Daemons[:2]
	if got := nextSteps(c, "/d", "cuttle", nil, nil); strings.Contains(got, "mount") {
		t.Errorf("no file system, yet:\n%s", got)
	}
	if got := downChecks(launcher.KindMDS); len(got) != 2 || got[0] != "MDS_ALL_DOWN" {
		t.Errorf("MDS down checks: %v", got)
	}
}

// The gateway's lines give the keys as exports and an aws command on
// its endpoint.
func TestS3Steps(t *testing.T) {
	c := &launcher.Cluster{Dir: "/d", Conf: "/d/cuttle.conf", Keyring: "/d/admin.keyring", Daemons: []launcher.Daemon{
		{Kind: launcher.KindMon, ID: "a"}, {Kind: launcher.KindOSD, ID: "0"}, {Kind: launcher.KindS3, ID: "a", Addr: "127.0.0.1:7506"}}}
	got := nextSteps(c, "/d", "cuttle", &s3Report{Endpoint: "http://127.0.0.1:7506", User: "admin", AccessKey: "AK", SecretKey: "SK", Region: "us-east-1"}, nil)
	if i, j := strings.Index(got, "S3 gateway at http://127.0.0.1:7506"), strings.Index(got, "Stop it with"); i < 0 || i > j {
		t.Errorf("the gateway's lines should come before how to stop:\n%s", got)
	}
	for _, want := range []string{
		"export AWS_ACCESS_KEY_ID=AK AWS_SECRET_ACCESS_KEY=SK AWS_DEFAULT_REGION=us-east-1\n",
		"aws --endpoint-url http://127.0.0.1:7506 s3 mb s3://bucket\n",
		"cuttle s3 user info admin",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("S3 steps lack %q:\n%s", want, got)
		}
	}
}

// A gateway counts as answering once any HTTP reply comes back (a 403
// included), and not while nothing listens.
func TestS3Answers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	d := launcher.Daemon{Kind: launcher.KindS3, ID: "a", Addr: srv.Listener.Addr().String()}
	if err := s3Answers(context.Background(), d); err != nil {
		t.Errorf("a 403 is an answer: %v", err)
	}
	srv.Close()
	if err := s3Answers(context.Background(), d); err == nil || !strings.Contains(err.Error(), "s3.a does not answer yet") {
		t.Errorf("closed gateway: %v", err)
	}
}

// An NBD server counts as answering once it opens the handshake; a
// listener that says something else is named as not one.
func TestNBDAnswers(t *testing.T) {
	serve := func(greeting string) (launcher.Daemon, func()) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_, _ = c.Write([]byte(greeting))
				c.Close()
			}
		}()
		return launcher.Daemon{Kind: launcher.KindNBD, ID: "a", Addr: l.Addr().String()}, func() { l.Close(); <-done }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, stop := serve("NBDMAGIC" + "IHAVEOPT")
	if err := nbdAnswers(ctx, d); err != nil {
		t.Errorf("an NBD greeting: %v", err)
	}
	stop()
	if err := nbdAnswers(ctx, d); err == nil || !strings.Contains(err.Error(), "nbd.a does not answer yet") {
		t.Errorf("closed: %v", err)
	}
	d, stop = serve("HTTP/1.1 400 Bad Request\r\n")
	defer stop()
	if err := nbdAnswers(ctx, d); err == nil || !strings.Contains(err.Error(), "is not an NBD server") {
		t.Errorf("not NBD: %v", err)
	}
}

// The export's lines name it as NBD tools take it.
func TestNBDSteps(t *testing.T) {
	c := &launcher.Cluster{Dir: "/d", Conf: "/d/cuttle.conf", Daemons: []launcher.Daemon{
		{Kind: launcher.KindMon, ID: "a"}, {Kind: launcher.KindOSD, ID: "0"}, {Kind: launcher.KindNBD, ID: "a", Addr: "127.0.0.1:7507"}}}
	r := nbdInfo(c)
	if r == nil || r.URI != "nbd://127.0.0.1:7507/disk0" || r.Image != "rbd/disk0" || r.Size != 10<<30 {
		t.Fatalf("nbd info %+v", r)
	}
	got := nextSteps(c, "/d", "cuttle", nil, r)
	for _, want := range []string{"image rbd/disk0 (10 GiB, sparse)", "  nbdinfo nbd://127.0.0.1:7507/disk0\n",
		"qemu-img convert -p -n -f raw -O raw DISK.img nbd://127.0.0.1:7507/disk0"} {
		if !strings.Contains(got, want) {
			t.Errorf("next steps lack %q:\n%s", want, got)
		}
	}
	c.Daemons = c.Daemons[:2]
	if nbdInfo(c) != nil {
		t.Error("an export without an NBD server")
	}
}

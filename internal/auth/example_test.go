package auth_test

import (
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
)

// Example shows the whole flow: a monitor authenticates a client by its
// secret and gives it an osd ticket; an osd verifies the ticket and
// authorizes the client's requests with the caps inside it. The
// messenger normally carries the payloads; here a loop does.
func Example() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	keyring, _ := auth.ParseKeyring([]byte(`
[client.rbd]
	key = AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=
	caps mon = "allow r"
	caps osd = "allow rw pool=rbd"
`))
	client, _ := auth.ParseEntityName("client.rbd")

	// The monitor.
	mon, _ := auth.NewAuthority(auth.AuthorityConfig{Keys: keyring, Now: clock})
	mon.Rotate(now)

	// An osd, holding the osd rotating keys the monitor sent it.
	osdKeys, _ := mon.ServiceKeys("osd")
	osd, _ := auth.NewVerifier(auth.VerifierConfig{Service: "osd", Keys: osdKeys, Now: clock})

	// The client logs in to the monitor with its secret...
	login := auth.NewMonClient(auth.MonClientConfig{Name: client, Secret: keyring[client].Key, Services: []string{"osd"}})
	run(login, mon.NewHandshake())
	ticket := login.Tickets()[0]
	fmt.Println("ticket for", ticket.Service, "valid until", ticket.ValidUntil.Format(time.TimeOnly))

	// ...and presents its ticket to the osd.
	server := osd.NewHandshake()
	run(auth.NewServiceClient(auth.ServiceClientConfig{Ticket: ticket, Now: clock}), server)
	fmt.Println("osd authenticated", server.Peer())

	caps, _ := auth.NewCapChecker(server.Peer(), server.Caps(), auth.Events{})
	fmt.Println(caps.Check(auth.Request{Service: "osd", Access: auth.AccessWrite, Pool: "rbd"}))
	fmt.Println(caps.Check(auth.Request{Service: "osd", Access: auth.AccessWrite, Pool: "data"}))
	// Output:
	// ticket for osd valid until 01:00:00
	// osd authenticated client.rbd
	// <nil>
	// auth: permission denied: forbidden: client.rbd: caps "allow rw pool=rbd" do not allow osd w pool="data"
}

// run passes payloads between the two sides until the handshake ends.
func run(c auth.ClientHandshake, s auth.ServerHandshake) {
	out, _, err := c.Step(nil)
	for done := false; err == nil && !done; {
		if out, _, err = s.Step(out); err == nil {
			out, done, err = c.Step(out)
		}
	}
	if err != nil {
		fmt.Println(err)
	}
}

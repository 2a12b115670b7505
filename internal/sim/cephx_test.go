package sim

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// A cluster with cephx, assembled as `cuttle osd run` assembles its
// daemons: each OSD logs in with its own key, fetches the osd service's
// rotating keys and keeps them fresh. Clients that log in hours later
// hold tickets sealed with keys that did not exist when the OSDs started,
// and the OSDs still verify them; an OSD that restarts logs in again.
func TestCephxRotatingKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("hours of virtual time")
	}
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDsWith(t, Options{Cephx: true})
		write := func(client, name string) {
			t.Helper()
			// A client whose ticket the OSDs cannot verify retries
			// until this ends (virtual time).
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			io, err := c.connect(t, client).OpenIOContext("rbd")
			if err != nil {
				t.Fatal(err)
			}
			if err := io.WriteFull(ctx, name, []byte(name)); err != nil {
				t.Fatalf("%s writes %s: %v", client, name, err)
			}
			if b, err := io.Read(ctx, name, 0, 0); err != nil || string(b) != name {
				t.Fatalf("%s reads %s: %q, %v", client, name, b, err)
			}
		}
		write("client.early", "early")

		// The monitors rotate the service keys every hour; the OSDs
		// refresh theirs at least every quarter of that.
		time.Sleep(150 * time.Minute)
		write("client.late", "late")

		// A restarted OSD logs in and fetches the keys again; I/O that
		// needs it (size 3: every write) still succeeds.
		c.KillOSD(0)
		c.StartOSD(0)
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		for i := range 3 {
			write(fmt.Sprintf("client.after%d", i), fmt.Sprintf("after%d", i))
		}
	})
}

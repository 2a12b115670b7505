package mon

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
)

// pgStub stands in for the PG statistics service: it answers "pg stat"
// and adds a section to "status".
type pgStub struct{}

func (pgStub) Name() string                    { return pgmapService }
func (pgStub) Load(*monstore.Store) error      { return nil }
func (pgStub) Tick(time.Time) []moncmd.Command { return nil }
func (pgStub) Handles(prefix string) (bool, bool) {
	return prefix == "pg stat", false
}
func (pgStub) Query(moncmd.Command) moncmd.Reply {
	return moncmd.Reply{Text: "4 pgs: 4 active+clean\n", Data: []byte(`{"num_pgs":4}`)}
}
func (pgStub) Prepare(moncmd.Command, time.Time) ([]byte, moncmd.Reply) { return nil, moncmd.Reply{} }
func (pgStub) Apply(*monstore.Batch, []byte, time.Time) (moncmd.Reply, error) {
	return moncmd.Reply{}, nil
}
func (pgStub) StatusText(time.Time) string { return "  data:\n    pgs: 4 active+clean\n" }

// "status" asks the PG service for "pg stat" (its JSON goes under
// "pgmap") and prints its own section instead of a services line.
func TestStatusSections(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := newTestCluster(t, 1)
		c.extra = func() []moncmd.Service { return []moncmd.Service{pgStub{}} }
		c.start("a")
		defer c.stopAll()
		r := c.client("x").mustRun(t, "a", "status")
		if !strings.HasSuffix(r.Text, "\n\n  data:\n    pgs: 4 active+clean\n") || strings.Contains(r.Text, "    pg: ") {
			t.Errorf("status:\n%s", r.Text)
		}
		var data struct {
			PGMap struct {
				NumPGs int `json:"num_pgs"`
			} `json:"pgmap"`
		}
		if err := json.Unmarshal(r.Data, &data); err != nil || data.PGMap.NumPGs != 4 {
			t.Errorf("status JSON %s: %v", r.Data, err)
		}
	})
}

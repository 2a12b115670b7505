package health_test

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/mon/health"
)

// Example combines a service's checks with a monitor check, as the
// monitor's driver does for "health detail".
func Example() {
	r := health.Summarize([]health.Check{
		{Code: "OSD_DOWN", Severity: health.Warn, Summary: "1 osds down",
			Detail: []string{"osd.3 (root=default,host=h1) is down"}},
		{Code: "MON_DOWN", Severity: health.Warn, Summary: "1/3 mons down, quorum a,b"},
	})
	fmt.Print(r.Text(true))
	// Output:
	// HEALTH_WARN 1/3 mons down, quorum a,b; 1 osds down
	// [WRN] MON_DOWN: 1/3 mons down, quorum a,b
	// [WRN] OSD_DOWN: 1 osds down
	//     osd.3 (root=default,host=h1) is down
}

package health

import (
	"encoding/json"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name   string
		checks []Check
		status Status
		text   string
		detail string
	}{
		{name: "none", status: OK, text: "HEALTH_OK\n", detail: "HEALTH_OK\n"},
		{
			name: "warnings sorted by code",
			checks: []Check{
				{Code: "OSDMAP_FLAGS", Severity: Warn, Summary: "noout flag(s) set"},
				{Code: "OSD_DOWN", Severity: Warn, Summary: "1 osds down", Detail: []string{"osd.2 (root=default,host=h2) is down"}},
			},
			status: Warn,
			text:   "HEALTH_WARN noout flag(s) set; 1 osds down\n",
			detail: "HEALTH_WARN noout flag(s) set; 1 osds down\n[WRN] OSDMAP_FLAGS: noout flag(s) set\n" +
				"[WRN] OSD_DOWN: 1 osds down\n    osd.2 (root=default,host=h2) is down\n",
		},
		{
			name: "error first",
			checks: []Check{
				{Code: "A", Severity: Warn, Summary: "a"},
				{Code: "Z", Severity: Err, Summary: "z"},
			},
			status: Err,
			text:   "HEALTH_ERR z; a\n",
			detail: "HEALTH_ERR z; a\n[ERR] Z: z\n[WRN] A: a\n",
		},
		{
			name:   "unknown severity counts as error",
			checks: []Check{{Code: "X", Severity: "HEALTH_BAD", Summary: "x"}},
			status: Err,
			text:   "HEALTH_ERR x\n",
			detail: "HEALTH_ERR x\n[ERR] X: x\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Summarize(tc.checks)
			if r.Status != tc.status {
				t.Errorf("status %s, want %s", r.Status, tc.status)
			}
			if got := r.Text(false); got != tc.text {
				t.Errorf("text:\n%q\nwant\n%q", got, tc.text)
			}
			if got := r.Text(true); got != tc.detail {
				t.Errorf("detail:\n%q\nwant\n%q", got, tc.detail)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	r := Summarize([]Check{
		{Code: "OSD_DOWN", Severity: Warn, Summary: "1 osds down", Detail: []string{"osd.1 is down"}},
	})
	var got map[string]any
	if err := json.Unmarshal(r.JSON(true), &got); err != nil {
		t.Fatal(err)
	}
	want := `{"checks":{"OSD_DOWN":{"detail":[{"message":"osd.1 is down"}],"severity":"HEALTH_WARN","summary":{"message":"1 osds down"}}},"status":"HEALTH_WARN"}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("detail json %s\nwant %s", b, want)
	}
	if s := string(r.JSON(false)); s != `{"status":"HEALTH_WARN","checks":{"OSD_DOWN":{"severity":"HEALTH_WARN","summary":{"message":"1 osds down"}}}}` {
		t.Errorf("json %s", s)
	}
	if s := string(Summarize(nil).JSON(false)); s != `{"status":"HEALTH_OK","checks":{}}` {
		t.Errorf("ok json %s", s)
	}
}

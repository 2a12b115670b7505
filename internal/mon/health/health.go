// Package health is the vocabulary of cluster health: named checks with a
// severity, a summary and detail lines, as Ceph's health checks are, and
// the rules that combine them into the overall status and print "health"
// and "health detail" as text and JSON.
//
// It owns no state and knows nothing of where checks come from: services
// (internal/mon/osdmon's Health) and the monitor's driver (MON_DOWN,
// MON_CLOCK_SKEW) produce checks, and the driver combines them with
// Summarize. Everything here is pure and safe for concurrent use.
package health

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
)

// Status is an overall or per-check health status, spelled as Ceph spells
// it.
type Status string

// Statuses, from best to worst.
const (
	OK   Status = "HEALTH_OK"
	Warn Status = "HEALTH_WARN"
	Err  Status = "HEALTH_ERR"
)

// rank orders statuses; unknown ones count as errors, so a typo cannot
// hide a problem.
func (s Status) rank() int {
	switch s {
	case OK:
		return 0
	case Warn:
		return 1
	}
	return 2
}

// short is the bracketed tag "health detail" prints before a check.
func (s Status) short() string {
	switch s {
	case OK:
		return "OK"
	case Warn:
		return "WRN"
	}
	return "ERR"
}

// Check is one named problem: Code is Ceph's identifier (OSD_DOWN),
// Severity is Warn or Err, Summary is one line ("2 osds down"), Detail
// names what is affected, one line each.
type Check struct {
	Code     string
	Severity Status
	Summary  string
	Detail   []string
}

// Report is the combined health of the cluster.
type Report struct {
	Status Status
	// Checks are ordered worst first, then by code.
	Checks []Check
}

// Summarize combines checks into a report: the status is the worst
// severity (HEALTH_OK with no checks). Checks are copied and sorted.
func Summarize(checks []Check) Report {
	r := Report{Status: OK, Checks: slices.Clone(checks)}
	slices.SortStableFunc(r.Checks, func(a, b Check) int {
		if c := cmp.Compare(b.Severity.rank(), a.Severity.rank()); c != 0 {
			return c
		}
		return strings.Compare(a.Code, b.Code)
	})
	for _, c := range r.Checks {
		if c.Severity.rank() > r.Status.rank() {
			r.Status = [...]Status{OK, Warn, Err}[c.Severity.rank()]
		}
	}
	return r
}

// Text formats the report as "ceph health" does (detail false):
//
//	HEALTH_WARN 1 osds down; noout flag(s) set
//
// or as "ceph health detail" does (detail true):
//
//	HEALTH_WARN 1 osds down; noout flag(s) set
//	[WRN] OSD_DOWN: 1 osds down
//	    osd.2 (root=default,host=h2) is down
//	[WRN] OSDMAP_FLAGS: noout flag(s) set
func (r Report) Text(detail bool) string {
	var b strings.Builder
	b.WriteString(string(r.Status))
	for i, c := range r.Checks {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString("; ")
		}
		b.WriteString(c.Summary)
	}
	b.WriteByte('\n')
	if !detail {
		return b.String()
	}
	for _, c := range r.Checks {
		b.WriteString("[" + c.Severity.short() + "] " + c.Code + ": " + c.Summary + "\n")
		for _, d := range c.Detail {
			b.WriteString("    " + d + "\n")
		}
	}
	return b.String()
}

// jsonReport is Ceph's "health --format json" shape:
//
//	{"status":"HEALTH_WARN","checks":{"OSD_DOWN":{"severity":"HEALTH_WARN",
//	 "summary":{"message":"1 osds down"},"detail":[{"message":"osd.2 ... is down"}]}}}
//
// detail is present only for "health detail".
type jsonReport struct {
	Status Status               `json:"status"`
	Checks map[string]jsonCheck `json:"checks"`
}

type jsonCheck struct {
	Severity Status        `json:"severity"`
	Summary  jsonMessage   `json:"summary"`
	Detail   []jsonMessage `json:"detail,omitempty"`
}

type jsonMessage struct {
	Message string `json:"message"`
}

// JSON formats the report as Ceph's JSON health (see jsonReport); with
// detail false the detail lists are left out. Checks with the same code
// are merged, their details concatenated.
func (r Report) JSON(detail bool) []byte {
	out := jsonReport{Status: r.Status, Checks: make(map[string]jsonCheck, len(r.Checks))}
	for _, c := range r.Checks {
		jc, seen := out.Checks[c.Code]
		if !seen {
			jc = jsonCheck{Severity: c.Severity, Summary: jsonMessage{c.Summary}}
		}
		if detail {
			for _, d := range c.Detail {
				jc.Detail = append(jc.Detail, jsonMessage{d})
			}
		}
		out.Checks[c.Code] = jc
	}
	b, err := json.Marshal(out)
	if err != nil { // strings and maps of strings always marshal
		return []byte(`{"status":"` + string(r.Status) + `"}`)
	}
	return b
}

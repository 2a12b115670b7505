package configmon

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/config"
)

// daemonTypes are the entity types a section may name.
func daemonTypes() []string { return []string{"mon", "mgr", "osd", "mds", "client"} }

// Limits on sections, names and values.
const (
	maxSection = 128
	maxValue   = config.MaxValue
)

// checkSection validates a section ("who"): "global", a daemon type, or a
// daemon "type.id" (an OSD's id is a number).
func checkSection(who string) error {
	if who == "global" {
		return nil
	}
	if len(who) > maxSection {
		return fmt.Errorf("section %.20q... longer than %d bytes", who, maxSection)
	}
	typ, id, dotted := strings.Cut(who, ".")
	known := false
	for _, t := range daemonTypes() {
		known = known || t == typ
	}
	if !known {
		return fmt.Errorf("section %q: want global, one of %s, or TYPE.ID", who, strings.Join(daemonTypes(), ", "))
	}
	if !dotted {
		return nil
	}
	if id == "" {
		return fmt.Errorf("section %q: empty id", who)
	}
	if typ == "osd" {
		if n, err := strconv.ParseUint(id, 10, 31); err != nil || strconv.FormatUint(n, 10) != id {
			return fmt.Errorf("section %q: an osd id is a number", who)
		}
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.", c)) {
			return fmt.Errorf("section %q: id may hold letters, digits, '-', '_' and '.'", who)
		}
	}
	return nil
}

// sectionsFor returns the sections that apply to who, most specific
// first: "osd.3" reads osd.3, then osd, then global.
func sectionsFor(who string) []string {
	if who == "global" {
		return []string{"global"}
	}
	typ, _, dotted := strings.Cut(who, ".")
	if dotted {
		return []string{who, typ, "global"}
	}
	return []string{who, "global"}
}

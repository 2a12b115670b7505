package configmon

import (
	"strconv"
	"time"

	"github.com/cuttlestore/cuttle/internal/config"
)

// View reads options as they apply to one section (a daemon type such as
// "mon", or a daemon such as "osd.3"), from the database as applied: the
// most specific section that sets a value wins, then the schema's default.
// A View follows later changes of its Service. Asking for a name that is
// not in the schema, or with the wrong type, returns the zero value: the
// callers are the monitor's own services, and their option names are
// checked against Schema by their tests.
type View struct {
	s   *Service
	who string
}

// View returns a view of the options for who. Services that decide in
// Apply must use a daemon-type view ("mon"), never one monitor's ("mon.a"),
// so that every monitor decides the same.
func (s *Service) View(who string) View { return View{s: s, who: who} }

func (v View) raw(name string, t config.Type) (string, bool) {
	o, ok := Lookup(name)
	if !ok || o.Type != t {
		return "", false
	}
	val, _, _ := v.s.db.lookup(v.who, name)
	return val, true
}

// Int returns an int option.
func (v View) Int(name string) int64 {
	s, _ := v.raw(name, config.TypeInt)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Size returns a size option in bytes.
func (v View) Size(name string) int64 {
	s, _ := v.raw(name, config.TypeSize)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Float returns a float option.
func (v View) Float(name string) float64 {
	s, _ := v.raw(name, config.TypeFloat)
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// Bool returns a bool option.
func (v View) Bool(name string) bool {
	s, _ := v.raw(name, config.TypeBool)
	return s == "true"
}

// String returns a string option.
func (v View) String(name string) string {
	s, _ := v.raw(name, config.TypeString)
	return s
}

// Duration returns a duration option.
func (v View) Duration(name string) time.Duration {
	s, _ := v.raw(name, config.TypeDuration)
	d, _ := time.ParseDuration(s)
	return d
}

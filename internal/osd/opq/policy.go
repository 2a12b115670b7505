package opq

// Policy decides when items may start. It sees the classes, their loads
// and the items' costs; never the work itself.
type Policy interface {
	// Admit reports whether an item of class c and cost may start while
	// its class has running already.
	Admit(c Class, cost int64, running Load) bool
	// Yields reports whether an item of class c about to start on a key
	// gives way to an item of class other queued on that key: the waiting
	// one is skipped for now and tried again once the key is free.
	Yields(c, other Class) bool
}

// Today is the policy the OSD has always had: client and replica work
// unlimited, recovery giving way to client ops on the same object, at
// most one scrub. Recovery's own limits (osd_max_backfills PGs,
// osd_recovery_max_active pushes each) are Limiters, changed at run time
// by the OSD's options.
type Today struct{}

// Admit admits every item but a second scrub.
func (Today) Admit(c Class, _ int64, running Load) bool {
	return c != Scrub || running.Items < 1
}

// Yields makes recovery give way to client ops: a write pushes its object
// itself before it applies.
func (Today) Yields(c, other Class) bool { return c == Recovery && other == Client }

package osdmap

import "fmt"

// Load is how busy an OSD is, in percent of each resource: its disk (the
// time its device was busy), its host's CPU and its host's memory. OSDs
// measure it and report it with their PG stats; the monitors publish it
// in the OSD's entry (coarsely, so that it changes the map seldom), and
// clients with read_policy score prefer less loaded replicas
// (docs/OSD.md, "Reading from replicas"). The zero Load is an idle OSD,
// or one that has reported nothing.
type Load struct {
	Disk, CPU, Memory uint8
}

func (l Load) valid() bool { return l.Disk <= 100 && l.CPU <= 100 && l.Memory <= 100 }

func (l Load) String() string {
	return fmt.Sprintf("disk %d%% cpu %d%% mem %d%%", l.Disk, l.CPU, l.Memory)
}

// SetLoad records OSD id's published load.
func (inc *Incremental) SetLoad(base *Map, id int32, l Load) error {
	if !l.valid() {
		return fmt.Errorf("osdmap: osd.%d: load %v above 100%%", id, l)
	}
	return inc.update(base, id, func(o *OSD) { o.Load = l })
}

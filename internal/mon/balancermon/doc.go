// Package balancermon is the monitors' balancer service (Ceph's mgr
// balancer module, run here by the monitors): whether the balancer is on
// and in which mode, and the named plans an operator made, replicated
// through the monitors' Raft log like every service's state and kept in
// the monitor store.
//
// While the balancer is on, the leader's Tick runs internal/balancer on
// the applied OSD map every balancer_sleep_interval (unless more than
// balancer_target_max_misplaced_ratio of the object copies are degraded
// or misplaced, so one round's data moves before the next starts) and
// returns the plan as an "osd pg-upmap-plan" command, which the OSD-map
// service checks and applies in one epoch. "balancer optimize" stores a
// plan; "balancer show" prints it with the command that executes it,
// which `cuttle balancer execute` sends; "balancer eval" scores the map
// or a plan.
//
// It owns no placement logic (internal/balancer) and no OSD map (osdmon,
// read through Config.Map). Concurrency: the driver calls it from one
// goroutine (moncmd.Service's contract). Start with service.go.
package balancermon

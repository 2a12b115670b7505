// Package sim runs a whole cluster in one process for deterministic
// tests: monitors, OSDs and clients on an in-memory network (memnet),
// with stores in memory, inside a testing/synctest bubble so that time is
// virtual. Tests start and stop daemons, partition the network and check
// what clients see.
//
// It is a test-only package (internal/archtest enforces it): it may
// import any part of Cuttle, and only tests import it.
package sim

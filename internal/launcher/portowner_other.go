//go:build !linux

package launcher

// listenerPID cannot tell who listens without Linux's /proc.
func listenerPID(string) int { return 0 }

// procArgs cannot read a command line without Linux's /proc.
func procArgs(int) []string { return nil }

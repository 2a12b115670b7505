//go:build !linux

package bufpool

func adviseHuge([]byte) {}

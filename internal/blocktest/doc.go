// Package blocktest holds the multi-process tests of block images under
// failure (issue 41's "Tests"): real clusters that `cuttle cluster up`
// starts, `cuttle nbd serve` as a process, and real NBD clients — fio with
// crc32c verification, an ext4 file system through nbdfuse and a loop
// device, qemu-io, qemu-img — while OSDs and NBD servers are killed with
// SIGKILL. It has no code outside its tests: TestMain builds the cuttle
// binary once and every test starts its cluster from it, so this package
// runs beside internal/cli's (long) tests rather than inside them.
package blocktest

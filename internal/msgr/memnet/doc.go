// Package memnet is an in-memory msgr.Network for tests: hosts named by
// address listen and dial each other through buffered in-process
// connections, with faults injected from a seeded random source.
//
// A fault breaks a whole connection, as a lost TCP connection does (a
// byte stream never loses a single frame): both ends fail at once and
// undelivered bytes are lost. The faults are
//
//   - random drops: each Write breaks its connection with probability
//     Config.DropRate (SetDropRate changes it);
//   - delays: each Write becomes readable after a seeded delay in
//     [MinDelay, MaxDelay], in order within a connection, so delivery
//     interleaves differently across connections;
//   - partitions: Partition(a, b) breaks the connections between two
//     addresses and refuses new ones until Heal.
//
// Time comes from an injected clock.Clock (the real one by default), so
// the network runs inside testing/synctest bubbles on virtual time; it
// starts no goroutines, and Close breaks every connection and listener.
//
// memnet knows nothing of frames or sessions; it imports msgr only for
// the Network interface it implements. Everything is safe for concurrent
// use. Start with New and Network.Host.
package memnet

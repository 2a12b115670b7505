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
//     addresses and fails new ones (ErrPartitioned, as a timeout would
//     end them) until Heal;
//   - refusing links: Refuse(a, b) resets their connections and refuses
//     new ones (ErrRefused, ECONNREFUSED) until Heal, as a dead peer's
//     host does;
//   - a stopped process: Freeze(addr) holds every byte to and from addr,
//     connections open and dials accepted, until Thaw, as SIGSTOP does.
//
// A dial to an address nobody listens on fails with ErrRefused, which
// wraps syscall.ECONNREFUSED, so a closed (killed) host is refused and a
// frozen or partitioned one is silent, as on TCP.
//
// Time comes from an injected clock.Clock (the real one by default), so
// the network runs inside testing/synctest bubbles on virtual time; it
// starts no goroutines, and Close breaks every connection and listener.
//
// memnet knows nothing of frames or sessions; it imports msgr only for
// the Network interface it implements. Everything is safe for concurrent
// use. Start with New and Network.Host.
package memnet

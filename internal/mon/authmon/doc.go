// Package authmon is the monitor's auth database as a replicated service
// (Ceph's AuthMonitor), named "auth": every entity's secret key and caps,
// and the rotating service keys the monitors seal tickets with. Operators
// change it with "auth add", "auth get-or-create", "auth caps", "auth rm"
// and "auth import", and read it with "auth get", "auth print-key" and
// "auth ls" (commands.go lists the arguments).
//
// It owns the database's store layout, its proposal format, the rules that
// keep the monitors' own key out of reach of commands, bootstrap from the
// monitors' keyring file, and rotation of the service keys through
// consensus. It knows nothing of Raft or the network: it implements
// moncmd.Service and the driver runs its proposals. Randomness (new
// secrets, new rotating keys) is drawn in Prepare and carried in the
// proposal, so Apply is deterministic and every monitor stores the same
// keys.
//
// Two outputs leave the package: a KeyServer (keyserver.go), the view of
// the applied entities the monitor's auth.Authority authenticates with,
// and the Authority itself, to which Apply and Load hand every applied set
// of rotating keys (auth.Authority.SetServiceKeys), so every monitor seals
// tickets with the same keys.
//
// # Store layout
//
// Under the service name "auth":
//
//	meta                envelope v1 { version uvarint, seeded bool }
//	entity/<TYPE.ID>    envelope v1 { key bytes(32), count uvarint,
//	                                  (service string, caps string) * count }
//	rotating/<service>  auth.RotatingKeys.Encode
//
// version counts the changes applied; every proposal carries the version
// it was prepared against and Apply refuses it with EAGAIN if another
// change came first. seeded records that the bootstrap import applied.
// Secrets are stored as they are: the monitor store is the monitors'
// private disk, as in Ceph.
//
// # Concurrency
//
// A Service is not safe for concurrent use: the driver calls it from one
// goroutine, as moncmd.Service requires. Its KeyServer is safe for
// concurrent use: Apply publishes an immutable snapshot of the entities
// that handshakes read on their own goroutines.
//
// Start reading at Service (service.go), then commands.go and rotate.go.
package authmon

// Package cls assembles the object classes Cuttle ships: Standard is the
// registry daemon assembly gives every OSD. The classes live in the
// sub-packages (lock, version, rbd for block images, kv for the key-value
// store, and later the bucket index class), and their contract with the
// OSD in objclass; the OSD itself knows none of them, only the Registry it
// is given.
//
// A class is added by writing its package (a Register(*objclass.Registry)
// function, the encoding of its inputs and outputs, and its tests) and
// listing it in Standard.
//
// Standard returns a new registry on every call; nothing here is shared.
package cls

import (
	"github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/internal/cls/lock"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/internal/cls/version"
)

// Standard returns a registry holding the classes Cuttle ships: lock,
// version, rbd (block images) and kv (the key-value store).
func Standard() *objclass.Registry {
	r := objclass.NewRegistry()
	for _, register := range []func(*objclass.Registry) error{lock.Register, version.Register, rbd.Register, kv.Register} {
		if err := register(r); err != nil {
			// Only a programming error in the classes above (a name
			// registered twice) gets here, and every test that starts an
			// OSD finds it.
			panic(err)
		}
	}
	return r
}

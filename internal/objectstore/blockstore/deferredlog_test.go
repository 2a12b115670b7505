package blockstore

import (
	"errors"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
)

// takeLogged refuses a hostile LogData payload with ErrCorrupt only.
func FuzzTakeLogged(f *testing.F) {
	f.Add(format.DeferredWrite{DevOff: testCB, Data: make([]byte, testCB)}.EncodeLogged(new(encoding.Encoder), 9))
	f.Add([]byte{format.PrefixDeferred})
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := takeLogged(b, testSB, map[string]*pendingWrite{}); err != nil && !errors.Is(err, objectstore.ErrCorrupt) {
			t.Fatalf("error not ErrCorrupt: %v", err)
		}
	})
}

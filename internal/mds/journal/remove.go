package journal

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Remove removes journal ino: its stream objects from the trimmed
// position on (up to the header's write position, and past it while
// whole object sets of a lazily recorded end exist), then its header. A
// journal that does not exist is rados.ErrNotFound. No writer may be
// writing it.
func Remove(ctx context.Context, io *rados.IOContext, ino uint64) error {
	h, err := ReadHeader(ctx, io, ino)
	if err != nil {
		return err
	}
	l := h.Layout
	sc := uint64(l.StripeCount)
	no, _, _ := l.Locate(h.TrimmedPos)
	no = no / sc * sc
	known := l.ObjectCount(h.WritePos)
	for {
		var found bool
		for k := range sc {
			err := io.Delete(ctx, layout.ObjectName(ino, no+k))
			switch {
			case err == nil:
				found = true
			case !errors.Is(err, rados.ErrNotFound):
				return fmt.Errorf("journal %#x: remove: %w", ino, err)
			}
		}
		no += sc
		if no >= known && !found {
			break
		}
	}
	if err := io.Delete(ctx, layout.ObjectName(ino, 0)); err != nil {
		return fmt.Errorf("journal %#x: remove the header: %w", ino, err)
	}
	return nil
}

package objectstore

import (
	"context"
	"errors"

	"github.com/cuttlestore/cuttle/objid"
)

// StatAttrsOf stats o in s and copies up to two of its attributes: in
// one lookup if s is an AttrStater, otherwise with Stat and GetAttr.
func StatAttrsOf(ctx context.Context, s Store, c CollectionID, o objid.ID, names [2]string) (StatAttrs, error) {
	if as, ok := s.(AttrStater); ok {
		return as.StatAttrs(ctx, c, o, names)
	}
	info, err := s.Stat(ctx, c, o)
	if err != nil {
		return StatAttrs{}, err
	}
	out := StatAttrs{Info: info}
	for i, name := range names {
		if name == "" {
			continue
		}
		v, err := s.GetAttr(ctx, c, o, name)
		switch {
		case errors.Is(err, ErrNoAttr):
			continue
		case err != nil:
			return StatAttrs{}, err
		}
		if v == nil {
			v = []byte{}
		}
		out.Vals[i], out.Has[i] = v, true
	}
	return out, nil
}

package rbd

import (
	"reflect"
	"testing"
)

func TestIntersect(t *testing.T) {
	x := func(pairs ...uint64) []Extent {
		var out []Extent
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, Extent{Offset: pairs[i], Length: pairs[i+1]})
		}
		return out
	}
	for _, tc := range []struct{ a, b, want []Extent }{
		{nil, x(0, 10), nil},
		{x(0, 10), x(0, 10), x(0, 10)},
		{x(0, 10), x(5, 10), x(5, 5)},
		{x(0, 4, 6, 4), x(2, 6), x(2, 2, 6, 2)},
		{x(0, 100), x(10, 5, 20, 5, 90, 20), x(10, 5, 20, 5, 90, 10)},
		{x(0, 5, 10, 5), x(5, 5), nil},
	} {
		if got := intersect(tc.a, tc.b); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("intersect(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := intersect(tc.b, tc.a); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("intersect(%v, %v) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

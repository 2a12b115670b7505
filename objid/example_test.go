package objid_test

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/objid"
)

func Example() {
	ids := []objid.ID{
		objid.Object(1, "", "foo"),
		objid.Object(1, "", "bar"),
		objid.New(1, "", "foo", "foo.part2", objid.NoSnap), // placed with foo
		objid.Object(1, "", "foo").WithSnap(4),
	}
	slices.SortFunc(ids, objid.Compare)
	for _, id := range ids {
		fmt.Printf("%08x %s\n", id.Hash, id)
	}
	// Output:
	// 7fc1f406 1:602f83fe:::foo:4
	// 7fc1f406 1:602f83fe:::foo:head
	// 7fc1f406 1:602f83fe::foo:foo.part2:head
	// efe6384b 1:d21c67f7:::bar:head
}

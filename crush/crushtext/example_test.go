package crushtext_test

import (
	"fmt"

	"github.com/cuttlestore/cuttle/crush/crushtext"
)

func Example() {
	src := []byte(`
device 0 osd.0
device 1 osd.1
type 0 osd
type 1 host
host h0 {
	id -1
	alg straw2
	hash 0
	item osd.0 weight 1.5
	item osd.1 weight 0.1   # 16.16: 6553, as Ceph truncates in float32
}
rule replicated_rule {
	id 0
	type replicated
	step take h0
	step choose firstn 0 type osd
	step emit
}
`)
	m, err := crushtext.Compile(src)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Bucket(-1).Weights)
	fmt.Printf("%s", crushtext.Decompile(m))

	_, err = crushtext.Compile([]byte("type 0 osd\ntype 1 host\nhost h {\n\talg straw2\n"))
	fmt.Println(err)
	// Output:
	// [98304 6553]
	// # begin crush map
	//
	// # devices
	// device 0 osd.0
	// device 1 osd.1
	//
	// # types
	// type 0 osd
	// type 1 host
	//
	// # buckets
	// host h0 {
	// 	id -1		# do not change unnecessarily
	// 	# weight 1.600
	// 	alg straw2
	// 	hash 0	# rjenkins1
	// 	item osd.0 weight 1.500
	// 	item osd.1 weight 0.100
	// }
	//
	// # rules
	// rule replicated_rule {
	// 	id 0
	// 	type replicated
	// 	min_size 1
	// 	max_size 100
	// 	step take h0
	// 	step choose firstn 0 type osd
	// 	step emit
	// }
	//
	// # end crush map
	// line 5, column 1: expected id, alg, hash, item or '}', found end of input
}

package crushtext

import (
	"strconv"

	"github.com/cuttlestore/cuttle/crush"
)

// buckets prints every non-shadow bucket, walking ids -1, -2, ... and
// printing each bucket's children before the bucket itself, skipping those
// already printed (Ceph's decompile_bucket). The text compiler needs items
// defined before use, which this order guarantees.
func (d *decompiler) buckets() {
	d.str("\n# buckets\n")
	done := make([]bool, d.m.MaxBuckets())
	for id := int32(-1); id >= -d.m.MaxBuckets(); id-- {
		d.bucketTree(id, done)
	}
}

func (d *decompiler) bucketTree(id int32, done []bool) {
	b := d.m.Bucket(id)
	if b == nil || done[-1-id] {
		return
	}
	done[-1-id] = true
	for _, item := range b.Items {
		if item < 0 {
			d.bucketTree(item, done)
		}
	}
	if !b.IsShadow() {
		d.bucket(b)
	}
}

func (d *decompiler) bucket(b *crush.Bucket) {
	d.str(d.typeName(b.Type) + " " + b.Name + " {\n\tid ")
	d.int(int64(b.ID))
	d.str("\t\t# do not change unnecessarily\n")
	for _, class := range d.classOrder(b) {
		d.str("\tid ")
		d.int(int64(b.ClassIDs[class]))
		d.str(" class " + class + "\t\t# do not change unnecessarily\n")
	}
	d.str("\t# weight ")
	d.weight(b.Weight())
	d.str("\n\talg " + b.Alg.String())
	// Ceph annotates the algorithms whose choices depend on item order
	// and size, and prints positions for the two that use them.
	withPos := false
	switch b.Alg {
	case crush.AlgUniform:
		d.str("\t# do not change bucket size (" + strconv.Itoa(len(b.Items)) + ") unnecessarily")
		withPos = true
	case crush.AlgList:
		d.str("\t# add new items at the end; do not change order unnecessarily")
	case crush.AlgTree:
		d.str("\t# do not change pos for existing items unnecessarily")
		withPos = true
	}
	d.str("\n\thash ")
	d.int(int64(b.Hash))
	if b.Hash == crush.HashRjenkins1 {
		d.str("\t# rjenkins1\n")
	} else {
		d.str("\t# unknown\n")
	}
	for j, item := range b.Items {
		d.str("\titem " + d.itemName(item) + " weight ")
		d.weight(b.Weights[j])
		if withPos {
			d.str(" pos ")
			d.int(int64(j))
		}
		d.str("\n")
	}
	d.str("}\n")
}

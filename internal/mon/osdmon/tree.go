package osdmon

import (
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// TreeNode is one line of "osd tree": a bucket, or an OSD with its state.
type TreeNode struct {
	ID     int32  `json:"id"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	TypeID int32  `json:"type_id"`
	Class  string `json:"device_class,omitempty"`
	// CrushWeight is a bucket's total, or a device's weight in its
	// parent.
	CrushWeight float64 `json:"crush_weight"`
	Depth       int     `json:"depth"`
	Children    []int32 `json:"children,omitempty"`
	// For OSDs: "up", "down", or "DNE" for a device with no OSD; the
	// reweight and primary affinity.
	Status          string   `json:"status,omitempty"`
	Reweight        *float64 `json:"reweight,omitempty"`
	PrimaryAffinity *float64 `json:"primary_affinity,omitempty"`
}

// TreeView is "osd tree": the hierarchy depth first from each root, and
// the OSDs in no bucket (stray).
type TreeView struct {
	Nodes []TreeNode `json:"nodes"`
	Stray []TreeNode `json:"stray"`
}

// Tree returns the "osd tree" of m.
func Tree(m *osdmap.Map) TreeView {
	cm := m.Crush()
	v := TreeView{Nodes: []TreeNode{}, Stray: []TreeNode{}}
	placed := map[int32]bool{}
	osdNode := func(id int32, weight uint32, depth int) TreeNode {
		d, _ := cm.Device(id)
		n := TreeNode{ID: id, Name: deviceName(id), Type: cm.TypeName(0), Class: d.Class, CrushWeight: toFloat(weight), Depth: depth, Status: "DNE"}
		if o := m.OSD(id); o.Exists() {
			rw, pa := toFloat(o.Weight), toFloat(o.PrimaryAffinity)
			n.Reweight, n.PrimaryAffinity, n.Status = &rw, &pa, "down"
			if o.IsUp() {
				n.Status = "up"
			}
		}
		return n
	}
	var walk func(id int32, weight uint32, depth int)
	walk = func(id int32, weight uint32, depth int) {
		if id >= 0 {
			placed[id] = true
			v.Nodes = append(v.Nodes, osdNode(id, weight, depth))
			return
		}
		b := cm.Bucket(id)
		v.Nodes = append(v.Nodes, TreeNode{ID: id, Name: b.Name, Type: cm.TypeName(b.Type), TypeID: b.Type,
			CrushWeight: toFloat(b.Weight()), Depth: depth, Children: append([]int32{}, b.Items...)})
		for i, item := range b.Items {
			walk(item, b.Weights[i], depth+1)
		}
	}
	for _, root := range cm.Roots() {
		walk(root, cm.Bucket(root).Weight(), 0)
	}
	for id := range m.MaxOSD() {
		if m.Exists(id) && !placed[id] {
			v.Stray = append(v.Stray, osdNode(id, 0, 0))
		}
	}
	return v
}

// Text lays the tree out in Ceph's columns.
func (v TreeView) Text() string {
	rows := [][]string{{"ID", "CLASS", "WEIGHT", "TYPE NAME", "STATUS", "REWEIGHT", "PRI-AFF"}}
	for _, n := range append(append([]TreeNode{}, v.Nodes...), v.Stray...) {
		name := strings.Repeat("    ", n.Depth) + n.Type + " " + n.Name
		if n.ID >= 0 {
			name = strings.Repeat("    ", n.Depth) + n.Name
		}
		rw, pa := "", ""
		if n.Reweight != nil {
			rw = strconv.FormatFloat(*n.Reweight, 'f', 5, 64)
			pa = strconv.FormatFloat(*n.PrimaryAffinity, 'f', 5, 64)
		}
		rows = append(rows, []string{strconv.Itoa(int(n.ID)), n.Class, strconv.FormatFloat(n.CrushWeight, 'f', 5, 64),
			name, n.Status, rw, pa})
	}
	// Headers and names align left.
	return moncmd.Columns(rows, func(row, col int) bool { return row == 0 || col == 3 })
}

// queryTree answers "osd tree".
func (s *Service) queryTree(moncmd.Command) moncmd.Reply {
	v := Tree(s.m)
	return replyJSON(v, v.Text())
}

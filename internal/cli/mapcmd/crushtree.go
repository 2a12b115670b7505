package mapcmd

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
)

// treeRow is one line of "cuttle crush tree".
type treeRow struct {
	ID     int32   `json:"id"`
	Class  string  `json:"class,omitempty"`
	Weight float64 `json:"weight"`
	Type   string  `json:"type"`
	Name   string  `json:"name"`
	Depth  int     `json:"depth"`
	// WeightSets holds the item's weight in its parent under each weight
	// set (choose_args), by index; absent where the set does not cover it.
	WeightSets map[string]float64 `json:"weight_sets,omitempty"`
}

func crushTreeCommand(out *cmdutil.Output) *cobra.Command {
	var in string
	cmd := &cobra.Command{
		Use:   "tree -i MAP",
		Short: "Print the hierarchy with weights (as crushtool --tree does)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := loadCrushMap(in)
			if err != nil {
				return err
			}
			rows := crushTree(m)
			return out.Print(rows, func(w io.Writer) error { return printTree(w, m, rows) })
		},
	}
	cmd.Flags().StringVarP(&in, "in", "i", "", "map to print (text or binary)")
	return cmd
}

// crushTree walks every root, shadow roots included, depth first in item
// order, as Ceph's tree dump does.
func crushTree(m *crush.Map) []treeRow {
	var rows []treeRow
	var walk func(id int32, weight uint32, depth int, parent int32, pos int)
	walk = func(id int32, weight uint32, depth int, parent int32, pos int) {
		row := treeRow{ID: id, Weight: float64(weight) / crush.WeightOne, Name: m.ItemName(id), Depth: depth,
			WeightSets: weightSetsOf(m, parent, pos)}
		if b := m.Bucket(id); b != nil {
			row.Type, row.Class = m.TypeName(b.Type), b.Class
			rows = append(rows, row)
			// Ceph lists children grouped by device class, otherwise in
			// item order.
			order := make([]int, len(b.Items))
			for i := range order {
				order[i] = i
			}
			slices.SortStableFunc(order, func(i, j int) int {
				return strings.Compare(itemClass(m, b.Items[i]), itemClass(m, b.Items[j]))
			})
			for _, i := range order {
				walk(b.Items[i], b.Weights[i], depth+1, b.ID, i)
			}
			return
		}
		d, _ := m.Device(id)
		row.Type, row.Class = m.TypeName(0), d.Class
		rows = append(rows, row)
	}
	var roots []int32
	for _, b := range m.Buckets() {
		if isRoot(m, b.ID) {
			roots = append(roots, b.ID)
		}
	}
	for i := len(roots) - 1; i >= 0; i-- { // ascending ids: -15 before -1
		walk(roots[i], m.Bucket(roots[i]).Weight(), 0, 0, 0)
	}
	return rows
}

// weightSetName names a weight set as Ceph's tree does: "(compat)" or the
// pool id.
func weightSetName(index int64) string {
	if index == crush.ChooseArgsCompat {
		return "(compat)"
	}
	return strconv.FormatInt(index, 10)
}

// weightSetsOf returns the first-position weight each weight set gives the
// item at pos in bucket parent.
func weightSetsOf(m *crush.Map, parent int32, pos int) map[string]float64 {
	var sets map[string]float64
	for _, index := range m.ChooseArgIndexes() {
		for _, a := range m.ChooseArgs(index).Args() {
			if a.BucketID != parent || len(a.Weights) == 0 {
				continue
			}
			if sets == nil {
				sets = map[string]float64{}
			}
			sets[weightSetName(index)] = float64(a.Weights[0][pos]) / crush.WeightOne
		}
	}
	return sets
}

func treeWeight(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', 5, 64)
}

func itemClass(m *crush.Map, id int32) string {
	if b := m.Bucket(id); b != nil {
		return b.Class
	}
	d, _ := m.Device(id)
	return d.Class
}

func isRoot(m *crush.Map, id int32) bool {
	for _, b := range m.Buckets() {
		for _, item := range b.Items {
			if item == id {
				return false
			}
		}
	}
	return true
}

// printTree lays rows out in Ceph's columns: numbers right-aligned, the
// indented "TYPE NAME" left-aligned, every line padded to full width.
func printTree(w io.Writer, m *crush.Map, rows []treeRow) error {
	header := []string{"ID", "CLASS", "WEIGHT"}
	var sets []string
	for _, index := range m.ChooseArgIndexes() {
		sets = append(sets, weightSetName(index))
	}
	header = append(append(header, sets...), "TYPE NAME")
	cells := [][]string{header}
	for _, r := range rows {
		row := []string{strconv.Itoa(int(r.ID)), r.Class, treeWeight(r.Weight)}
		for _, set := range sets {
			cell := ""
			if v, ok := r.WeightSets[set]; ok {
				cell = treeWeight(v)
			}
			row = append(row, cell)
		}
		name := strings.Repeat("    ", r.Depth) + r.Type + " " + r.Name
		if r.ID >= 0 {
			name = strings.Repeat("    ", r.Depth) + r.Name
		}
		cells = append(cells, append(row, name))
	}
	width := make([]int, len(header))
	for _, c := range cells {
		for i, s := range c {
			width[i] = max(width[i], len(s))
		}
	}
	last := len(header) - 1
	for n, c := range cells {
		var line strings.Builder
		for i, s := range c {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(s))
			if n == 0 || i == last { // headers and names align left
				line.WriteString(s + pad)
			} else {
				line.WriteString(pad + s)
			}
		}
		if _, err := fmt.Fprintln(w, line.String()); err != nil {
			return err
		}
	}
	return nil
}

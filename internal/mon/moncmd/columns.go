package moncmd

import "strings"

// Columns lays rows out for a Reply's Text: each column as wide as its
// widest cell, two spaces apart, aligned right unless left says the cell
// at (row, col) aligns left; trailing spaces are trimmed.
func Columns(rows [][]string, left func(row, col int) bool) string {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for n, r := range rows {
		var line strings.Builder
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			if left != nil && left(n, i) {
				line.WriteString(c + pad)
			} else {
				line.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

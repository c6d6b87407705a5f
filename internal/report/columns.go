package report

import (
	"io"
	"strings"
	"unicode/utf8"
)

// columns is a text table whose words read left-aligned (names,
// verdicts) and whose figures right-aligned, so that their digits line
// up: text/tabwriter aligns a whole table one way.
type columns struct {
	head []string
	// left says which columns are left-aligned.
	left []bool
	rows [][]string
}

// add appends a row of cells.
func (t *columns) add(cells ...string) { t.rows = append(t.rows, cells) }

// write writes the table, its columns two spaces apart, no line ending
// in spaces.
func (t *columns) write(w io.Writer) error {
	all := append([][]string{t.head}, t.rows...)
	var width []int
	for _, row := range all {
		for i, cell := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for _, row := range all {
		var line strings.Builder
		for i, cell := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell))
			if i < len(t.left) && t.left[i] {
				line.WriteString(cell + pad)
			} else {
				line.WriteString(pad + cell)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

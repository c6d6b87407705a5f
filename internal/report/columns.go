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

// widths are the columns' widths: each its widest cell's, the head's
// included.
func (t *columns) widths() []int {
	var width []int
	for _, row := range append([][]string{t.head}, t.rows...) {
		for i, cell := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	return width
}

// write writes the table, its columns two spaces apart, no line ending
// in spaces.
func (t *columns) write(w io.Writer) error {
	width := t.widths()
	var b strings.Builder
	for _, row := range append([][]string{t.head}, t.rows...) {
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

// writeFitted writes the table as several, one under the other, each
// within textWidth: its first keep columns (the names) in every one, and
// the others in order, as many beside them as fit. A column too wide to
// fit beside the names gets a table of its own.
func (t *columns) writeFitted(w io.Writer, keep int) error {
	width := t.widths()
	base := 0
	for _, n := range width[:keep] {
		base += n + 2
	}
	var groups [][]int
	for i, used := keep, base; i < len(t.head); i++ {
		if len(groups) == 0 || used+width[i] > textWidth {
			groups, used = append(groups, nil), base
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], i)
		used += width[i] + 2
	}
	for g, cols := range groups {
		if g > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		idx := make([]int, 0, keep+len(cols))
		for i := range keep {
			idx = append(idx, i)
		}
		idx = append(idx, cols...)
		pick := func(row []string) []string {
			var out []string
			for _, i := range idx {
				if i < len(row) {
					out = append(out, row[i])
				}
			}
			return out
		}
		part := columns{head: pick(t.head)}
		for _, i := range idx {
			part.left = append(part.left, i < len(t.left) && t.left[i])
		}
		for _, row := range t.rows {
			part.add(pick(row)...)
		}
		if err := part.write(w); err != nil {
			return err
		}
	}
	return nil
}

package report_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
)

// Every row of the markdown table has as many cells as its header, a
// '|' in a cell's text escaped, and every condition has its row.
func TestMarkdownTable(t *testing.T) {
	s, _ := recorded(t)
	s.Conditions[0].Name = "a|b" // a name that would split its cell
	var b bytes.Buffer
	if err := report.Markdown(&b, s); err != nil {
		t.Fatal(err)
	}
	cell := regexp.MustCompile(`(^|[^\\])\|`)
	var rows []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "|") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2+len(s.Conditions) {
		t.Fatalf("%d table rows; want the header, its rule and %d conditions:\n%s", len(rows), len(s.Conditions), b.String())
	}
	want := len(cell.FindAllString(rows[0], -1))
	for _, r := range rows[1:] {
		if n := len(cell.FindAllString(r, -1)); n != want {
			t.Errorf("row %q has %d cell borders; the header %d", r, n, want)
		}
	}
	if !strings.Contains(rows[2], `a\|b`) {
		t.Errorf("first row %q; want the name's '|' escaped", rows[2])
	}
}

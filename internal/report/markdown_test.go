package report_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
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

// A row with a shared part (split beside a duet) gets its line under the
// text table and in the markdown, with its interval and basis; a row
// without one gets none.
func TestSharedLines(t *testing.T) {
	s, _ := recorded(t)
	s.Conditions[1].Shared = &result.SharedSummary{Pct: 4.47, CILow: -1.63, CIHigh: 10.58, Basis: result.BasisServerCPU}
	want := s.Conditions[1].Name + ": 4.5 points [-1.6, 10.6] of its whole cost fall on every session"
	var text, md bytes.Buffer
	if err := report.Text(&text, s); err != nil {
		t.Fatal(err)
	}
	if err := report.Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		if n := strings.Count(out, "shared: "); n != 1 || !strings.Contains(out, want) || !strings.Contains(out, "on server CPU per statement") {
			t.Errorf("%s: %d shared lines; want one, %q, on its basis:\n%s", name, n, want, out)
		}
	}
}

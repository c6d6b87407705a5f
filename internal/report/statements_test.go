package report

import (
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// Each statement is a row, each condition a column; a statement a
// condition did not run is "-"; workloads without named statements print
// nothing.
func TestStatementsTable(t *testing.T) {
	sl := func(name string, n int64, ms float64) result.StatementLatency {
		return result.StatementLatency{Statement: name, Count: n, MeanMS: ms}
	}
	s := result.Summary{Conditions: []result.ConditionSummary{
		{Name: "baseline", Statements: []result.StatementLatency{sl("a.sql:2 BEGIN", 1200, 0.041), sl("a.sql:3 SELECT 1", 1200, 0.25)}},
		{Name: "log-all", Statements: []result.StatementLatency{sl("a.sql:2 BEGIN", 1000, 0.05), sl("a.sql:3 SELECT 1", 0, 0)}},
	}}
	var b strings.Builder
	if err := Statements(&b, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "latency per statement") {
		t.Fatalf("got:\n%s", b.String())
	}
	for i, want := range [][]string{{"statement", "baseline", "log-all"}, {"a.sql:2 BEGIN", "0.041 (1,200)", "0.050 (1,000)"}, {"a.sql:3 SELECT 1", "0.250 (1,200)", "-"}} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("line %q lacks %q", lines[i+1], w)
			}
		}
	}
	b.Reset()
	s.Conditions[0].Statements, s.Conditions[1].Statements = nil, nil
	if Statements(&b, s); b.Len() != 0 {
		t.Errorf("no named statements printed %q; want nothing", b.String())
	}
}

// A table shortens a long statement's name, which summary.json keeps
// whole; the HTML report gives it whole as the cell's title.
func TestStatementNameShortened(t *testing.T) {
	long := "wild-a.sql:6 SELECT 1 / (CASE WHEN $1 = 3 THEN 1 ELSE 0 END) AS wild_a, 2 AS wild_b"
	s := result.Summary{Conditions: []result.ConditionSummary{
		{Name: "baseline", Statements: []result.StatementLatency{{Statement: long, Count: 10, MeanMS: 0.1}}},
	}}
	var b strings.Builder
	if err := Statements(&b, s); err != nil {
		t.Fatal(err)
	}
	short := shortStatement(long)
	if len(short) != statementWidth || !strings.HasSuffix(short, "...") || !strings.HasPrefix(long, strings.TrimSuffix(short, "...")) {
		t.Errorf("shortened to %q; want its first %d bytes and ...", short, statementWidth-3)
	}
	if !strings.Contains(b.String(), short) || strings.Contains(b.String(), long) {
		t.Errorf("table:\n%s\nwant the name shortened to %q", b.String(), short)
	}
	if m := statementMatrix(s); len(m.Rows) != 1 || m.Rows[0].Full != long {
		t.Errorf("rows %+v; want the whole name kept for the HTML report's title", m.Rows)
	}
}

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

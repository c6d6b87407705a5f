package report_test

import (
	"bytes"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

// The counted experiment's table (--method instructions), for a server
// whose sessions are processes and for one whose sessions are threads:
// the columns name the backend or the session, the other processes or
// threads, and the scope line says what counting leaves out; a condition
// that makes more system calls than the baseline is named under it.
func TestInstructionsTable(t *testing.T) {
	conds := []result.CountedCondition{
		{Name: "baseline", Runs: 3, Backend: 41234.5, Helpers: 1.9e9, BackendSpreadPct: 0.0004, Syscalls: 2, HelperSyscalls: 0.12, Seconds: 31},
		{Name: "general-log-file", Runs: 3, Backend: 43890.2, Helpers: 1.95e9, BackendSpreadPct: 0.012,
			BackendChange: &result.CountChange{Pct: 6.44, Low: 6.41, High: 6.47, HasCI: true, Pairs: 3, Signif: true},
			HelperChange:  &result.CountChange{Pct: 2.6, Low: -1.2, High: 6.3, HasCI: true, Pairs: 3},
			Syscalls:      3.01, HelperSyscalls: 0.12, Seconds: 33},
	}
	for _, c := range []struct {
		golden  string
		threads bool
	}{
		{"testdata/instructions-processes.txt", false},
		{"testdata/instructions-threads.txt", true},
	} {
		var b bytes.Buffer
		report.Instructions(&b, report.InstructionsHead{Server: "test server 1.0", Workload: "credit-top1", Statements: 400, Warmup: 50, Rounds: 3, Threads: c.threads}, conds)
		compareGolden(t, c.golden, b.Bytes())
		fitsTerminal(t, b.String())
	}
}

// Queries counted apart (--count-per-query) get a table of their own
// under the counted one: a line per query, the baseline's instructions
// per execution, each observer's change on it.
func TestInstructionsPerQuery(t *testing.T) {
	change := func(p float64) *result.CountChange {
		return &result.CountChange{Pct: p, Low: p - 0.02, High: p + 0.02, HasCI: true, Pairs: 4, Signif: p > 0.02}
	}
	conds := []result.CountedCondition{
		{Name: "baseline", Runs: 4, Backend: 14452632, Seconds: 13, Queries: []result.CountedQuery{
			{Name: "q01", Executions: 12, PerExec: 9_870_123}, {Name: "q02", Executions: 30, PerExec: 61_234}}},
		{Name: "auto-explain-analyze", Runs: 4, Backend: 15190690, BackendChange: change(5.11), Seconds: 16, Queries: []result.CountedQuery{
			{Name: "q01", Executions: 12, PerExec: 10_380_000, Change: change(5.17)}, {Name: "q02", Executions: 30, PerExec: 66_000, Change: change(7.78)}}},
		{Name: "log-filtered-out", Runs: 4, Backend: 14452731, BackendChange: change(0), Seconds: 13, Queries: []result.CountedQuery{
			{Name: "q01", Executions: 12, PerExec: 9_870_200, Change: change(0)}}},
	}
	var b bytes.Buffer
	report.Instructions(&b, report.InstructionsHead{Server: "test server 1.0", Workload: "dss-mix", Statements: 101, Rounds: 4}, conds)
	compareGolden(t, "testdata/instructions-queries.txt", b.Bytes())
	fitsTerminal(t, b.String())
	checkHas(t, "table", b.String(), "per query: the session's instructions per execution", "q02", "+7.78 [+7.76, +7.80]", "9,870,123")
}

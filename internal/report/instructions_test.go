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
	}
}

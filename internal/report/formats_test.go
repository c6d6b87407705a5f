package report_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

// recorded is a real experiment's runs (MariaDB, rounds and alternation),
// summarized by the current analysis: the goldens follow what the
// analysis computes, not a summary frozen when the runs were recorded.
func recorded(t *testing.T) (result.Summary, []result.Run) {
	t.Helper()
	dir := filepath.Join("testdata", "run-mariadb")
	runs, err := result.ReadRuns(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	head := readSummary(t, filepath.Join(dir, "summary.json"))
	head.Warnings, head.MDEPct = nil, nil // the analysis makes its own
	var conditions []string
	for _, c := range head.Conditions {
		conditions = append(conditions, c.Name)
	}
	return analysis.Summarize(head, conditions, runs), runs
}

// Each output format of the recorded experiment matches its golden file
// (testdata/run-mariadb/report.FORMAT; go test -update rewrites them).
func TestFormatGoldens(t *testing.T) {
	s, runs := recorded(t)
	for _, format := range report.Formats {
		t.Run(string(format), func(t *testing.T) {
			var b bytes.Buffer
			if err := report.Write(&b, format, s, runs); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", "run-mariadb", "report."+string(format)), b.Bytes())
		})
	}
}

// The benchstat format parses as Go benchmark results, one per sample,
// and the standard benchstat tool compares two of them.
func TestBenchstatFormat(t *testing.T) {
	s, runs := recorded(t)
	var b bytes.Buffer
	if err := report.Benchstat(&b, s, runs); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(bytes.NewReader(b.Bytes()), "obsbench.txt")
	names := map[string]int{}
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			names[string(rec.Name)]++
			if v, ok := rec.Value("stmts/s"); !ok || v <= 0 {
				t.Errorf("%s: stmts/s = %v", rec.Name, v)
			}
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		}
	}
	// One sample per rounds run; one per phase of the alternation run
	// (16 s of 2-4 s phases: at least 2 on and 3 off phases).
	if names["Obsbench/condition=baseline"] != 3 || names["Obsbench/condition=perf-schema"] != 3 ||
		names["Obsbench/condition=general-log-file/phase=on"] < 2 || names["Obsbench/condition=general-log-file/phase=off"] < 3 {
		t.Errorf("samples per benchmark = %v; want 3 baseline and perf-schema runs, a sample per general-log-file phase", names)
	}

	dir := t.TempDir()
	old, new := filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")
	os.WriteFile(old, b.Bytes(), 0o644)
	os.WriteFile(new, b.Bytes(), 0o644)
	out, err := exec.Command("go", "run", "golang.org/x/perf/cmd/benchstat", old, new).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	// benchstat shows ns/stmt as sec/stmt, and compares the two files.
	checkHas(t, "benchstat output", string(out), "condition=baseline", "condition=perf-schema", "stmts/s", "sec/stmt", "vs base")
}

// At a rate, a whole run's line carries its server CPU per statement
// and its latency from the schedule, which benchfmt reads as units; a
// run that could not keep the rate has no latency.
func TestBenchstatAtRate(t *testing.T) {
	s, runs := recorded(t)
	sat := -1
	for i := range runs {
		if len(runs[i].Phases) > 0 || runs[i].Error != "" {
			continue
		}
		runs[i].Driver.Rate = &result.RateResult{Asked: 1000, Scheduled: 1000, Started: 1000, Completed: 1000, Latency: result.Latency{P50: 0.5, P99: 4}}
		if sat < 0 {
			sat = i
			runs[i].Driver.Rate.Backlog, runs[i].Driver.Rate.Started = 600, 400
		}
	}
	var b bytes.Buffer
	if err := report.Benchstat(&b, s, runs); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(bytes.NewReader(b.Bytes()), "obsbench.txt")
	withLatency, withCPU, lines := 0, 0, 0
	for r.Scan() {
		rec, ok := r.Result().(*benchfmt.Result)
		if !ok || strings.Contains(string(rec.Name), "/phase=") {
			continue
		}
		lines++
		if v, ok := rec.Value("sched-p99-ms"); ok && v == 4 {
			withLatency++
		}
		if v, ok := rec.Value("srv-us/stmt"); ok && v > 0 {
			withCPU++
		}
	}
	if lines == 0 || withLatency != lines-1 || withCPU != lines {
		t.Errorf("%d whole runs: %d with the schedule's p99, %d with server CPU per statement; want all but the saturated one, and all\n%s",
			lines, withLatency, withCPU, b.String())
	}
}

// csvRows is s written as CSV and read back, header first.
func csvRows(t *testing.T, s result.Summary) [][]string {
	t.Helper()
	var b bytes.Buffer
	if err := report.CSV(&b, s); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestCSVFormat(t *testing.T) {
	s, _ := recorded(t)
	rows := csvRows(t, s)
	if len(rows) != len(s.Conditions)+1 || rows[0][0] != "condition" || rows[0][3] != "overhead_pct" {
		t.Fatalf("csv rows %v", rows)
	}
	for i, c := range s.Conditions {
		if rows[i+1][0] != c.Name || len(rows[i+1]) != len(rows[0]) {
			t.Errorf("row %d = %v; want %s with %d fields", i+1, rows[i+1], c.Name, len(rows[0]))
		}
	}
}

// A counted run's CSV carries each observer's counted changes in the last
// columns, to three decimals, and leaves them empty for the rows the count
// does not stand for.
func TestCSVCounted(t *testing.T) {
	s := readSummary(t, filepath.Join("testdata", "duet-counted.json"))
	rows := csvRows(t, s)
	col := slices.Index(rows[0], "instr_per_stmt_change_pct")
	if col < 0 || rows[0][col+3] != "other_instr_change_pct" {
		t.Fatalf("header %v; want the counted columns", rows[0])
	}
	for _, r := range rows[1:] {
		k := s.Counted.Condition(r[0])
		switch {
		case k == nil || k.BackendChange == nil:
			if r[col] != "" {
				t.Errorf("%s: counted %q; want empty", r[0], r[col])
			}
		default:
			want := strconv.FormatFloat(math.Round(k.BackendChange.Pct*1000)/1000, 'f', -1, 64)
			if r[col] != want || r[col+1] == "" || r[col+2] == "" {
				t.Errorf("%s: counted %v; want %s with its interval", r[0], r[col:col+3], want)
			}
		}
	}
}

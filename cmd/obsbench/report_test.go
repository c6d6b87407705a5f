package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/result"
)

// obsbench report renders a recorded experiment as report.html, or in a
// format on standard output.
func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"summary.json", "results.jsonl"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "internal", "report", "testdata", "run-mariadb", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"report", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !bytes.Contains(page, []byte(`id="chart-overhead"`)) {
		t.Fatalf("report.html: %v, %d bytes", err, len(page))
	}
	for format, want := range map[string]string{
		"csv": "condition,method,stmts_per_s", "benchstat": "BenchmarkObsbench/condition=baseline ",
		"json": `"conditions": [`, "text": "overhead % [CI]",
	} {
		stdout.Reset()
		if code := run(context.Background(), []string{"report", dir, "--format", format}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), want) {
			t.Errorf("report --format %s: exit %d, output lacks %q:\n%s", format, code, want, stdout.String())
		}
	}
	if code := run(context.Background(), []string{"report", t.TempDir()}, &stdout, &stderr); code != exitUsage {
		t.Errorf("report of an empty directory: exit %d; want %d", code, exitUsage)
	}
}

// An exceeded --max-overhead has its own exit code.
func TestOverheadExitCode(t *testing.T) {
	if code := exitCode(&analysis.OverheadError{}, &bytes.Buffer{}); code != exitOverhead {
		t.Errorf("exit code for an exceeded gate = %d; want %d", code, exitOverhead)
	}
}

// readSummary reads a summary.json that obsbench wrote, after checking it
// against the schema (internal/result/summary.schema.json): every run, study
// and sweep test's summary is also a test of the schema.
func readSummary(t *testing.T, path string) (result.Summary, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return result.Summary{}, err
	}
	if err := result.ValidateSummary(b); err != nil {
		t.Errorf("%s does not follow the schema: %v", path, err)
	}
	return result.ReadSummary(path)
}

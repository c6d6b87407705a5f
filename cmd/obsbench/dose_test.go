package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

// A dose sweep: log-sampled with log_statement_sample_rate at 0.01 then
// 0.1, one experiment each, each point's log holding the sample its own
// value makes, the table of overhead against the dose and its page, and
// with --max-overhead the largest value within it.
func TestDoseSweep(t *testing.T) {
	needServers(t)
	tmp, _ := privateState(t)
	out := filepath.Join(tmp, "out")
	stdout, _ := runOK(t, "run", "--observers", "log-sampled", "--dose", "log_statement_sample_rate=0.01,0.1",
		"--method", "rounds", "--rounds", "2", "--duration", "2s", "--warmup", "500ms", "--clients", "4", "--count=false",
		"--max-overhead", "95", "--seed", "9", "--out", out)
	for _, want := range []string{"dose sweep: log-sampled's log_statement_sample_rate = 0.01, 0.1", "sampled 0.01", "sampled 0.1",
		"largest log_statement_sample_rate within --max-overhead 95%"} {
		if !printed(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	rec, ok, err := report.ReadSweep(out)
	if !ok || err != nil || len(rec.Points) != 2 {
		t.Fatalf("sweep.json: %+v, %v, %v; want two points", rec, ok, err)
	}
	for i, share := range []float64{0.01, 0.1} {
		p := rec.Points[i]
		var e *result.Events
		for _, c := range p.Summary.Conditions {
			if c.Name == "log-sampled" {
				e = c.Events
			}
		}
		if e == nil || e.SampleRate != share {
			t.Fatalf("%s: events %+v; want a sample of %g", p.Label(), e, share)
		}
		if lo, hi, _ := e.SampledInterval(); e.Executed == 0 || e.Recorded < lo || e.Recorded > hi {
			t.Errorf("%s: %d of %d statements logged; want %d-%d", p.Label(), e.Recorded, e.Executed, lo, hi)
		}
	}
	if page, err := os.ReadFile(filepath.Join(out, "report.html")); err != nil || !strings.Contains(string(page), "<svg") {
		t.Errorf("the sweep's report.html: %v; want the curve", err)
	}
	noServersLeft(t, tmp)
}

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

// A dose sweep on MariaDB: slow-log-sampled with log_slow_rate_limit at
// 100 then 10, one experiment each, each point's log holding the sample
// its own value makes (a hundredth, then a tenth of the statements),
// the table of overhead against the dose, and with --max-overhead the
// largest value within it.
func TestDoseSweepMariaDB(t *testing.T) {
	needServers(t)
	tmp, _ := privateState(t)
	out := filepath.Join(tmp, "out")
	stdout, _ := runOK(t, "run", "--engine", "mariadb", "--observers", "slow-log-sampled", "--dose", "log_slow_rate_limit=100,10",
		"--method", "rounds", "--rounds", "2", "--duration", "2s", "--warmup", "500ms", "--clients", "4", "--count=false",
		"--max-overhead", "95", "--seed", "9", "--out", out)
	for _, want := range []string{"dose sweep: slow-log-sampled's log_slow_rate_limit = 100, 10", "sampled 0.01", "sampled 0.1",
		"largest log_slow_rate_limit within --max-overhead 95%"} {
		if !strings.Contains(stdout, want) {
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
			if c.Name == "slow-log-sampled" {
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
	noServersLeft(t, tmp)
}

package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/counting"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/stats"
)

// --count-width on a managed PostgreSQL: a change wider than it after the
// first rounds is counted more rounds beside the baseline, each round at
// a layout of its own, up to three times the first rounds where the
// width cannot be reached (no count is that exact), and its interval is
// the two-stage one: no narrower than the t interval over all rounds.
func TestInstructionsCountWidth(t *testing.T) {
	servertest.SkipShort(t)
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr := runOK(t, "run", "--method", "instructions", "--observers", "pg-stat-statements",
		"--rounds", "4", "--count-width", "0.0001", "--count-statements", "10", "--count-warmup", "0", "--seed", "3", "--out", out)
	rec := readInstructions(t, out)
	if rec.Width != 0.0001 || rec.Rounds != 4 || len(rec.Conditions) != 2 {
		t.Fatalf("instructions.json: width %v, rounds %d, %d conditions; want 0.0001, 4 (the first), 2", rec.Width, rec.Rounds, len(rec.Conditions))
	}
	rounds := map[string]map[int]counting.Sample{}
	for _, r := range rec.Runs {
		if rounds[r.Condition] == nil {
			rounds[r.Condition] = map[int]counting.Sample{}
		}
		rounds[r.Condition][r.Round] = r
	}
	var logs []float64
	for r := 1; r <= 12; r++ {
		b, okB := rounds["baseline"][r]
		o, okO := rounds["pg-stat-statements"][r]
		if !okB || !okO {
			t.Fatalf("round %d: baseline counted %v, pg-stat-statements %v; want both, rounds 1 to 12", r, okB, okO)
		}
		logs = append(logs, math.Log(o.Backend/b.Backend))
	}
	if len(rec.Runs) != 24 {
		t.Errorf("%d runs; want 24 (12 rounds of 2 conditions)", len(rec.Runs))
	}
	ch := rec.Conditions[1].BackendChange
	_, lo, hi, _ := stats.MeanCI(logs, counting.Level)
	if ch == nil || ch.Pairs != 12 || ch.Low > 100*(math.Exp(lo)-1)+1e-9 || ch.High < 100*(math.Exp(hi)-1)-1e-9 {
		t.Errorf("pg-stat-statements' change %+v; want 12 pairs and at least the t interval [%.4f, %.4f]", ch, 100*(math.Exp(lo)-1), 100*(math.Exp(hi)-1))
	}
	wantPrinted(t, stdout, "4 run(s) per condition, up to 12 where the first 4 left a change wider than ±0.0001 point, their interval two-stage")
	if !strings.Contains(stderr, "pg-stat-statements to 12") {
		t.Errorf("stderr does not say which condition is counted more rounds:\n%s", stderr)
	}
}

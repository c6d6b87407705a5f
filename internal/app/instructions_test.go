package app

import (
	"context"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/calibrate"
	"github.com/obsbench/obsbench/internal/counting"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/server/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// The calibration observer adds a known number of loop iterations of
// server work to every statement. Counted, the work of one iteration is
// found from two numbers of them; observers of about 1% and 5% more
// instructions are recovered at the size it predicts, to within a tenth
// of a percentage point.
func TestInstructionsRecoverCalibration(t *testing.T) {
	servertest.SkipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	wl, err := workload.Lookup(calibrate.Workload)
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := dataset.Lookup(wl.Dataset)
	target, err := OpenServer(ctx, "postgres", engine.Options{Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	if err := engine.Prepare(ctx, target, workload.PostgreSQL, wl, ds, t.Logf); err != nil {
		t.Fatal(err)
	}
	cs := target.(counting.Server)
	// Every condition leaves the one-row table that holds the loop count
	// as it found it, rewritten: its dead row versions, which each
	// statement's read of it would skip, do not pile up from one
	// condition's change to the next.
	const compact = "VACUUM FULL obsbench_calibration"
	calibration := func(name string, loops int) observer.Observer {
		return observer.Observer{Name: name, Engine: "postgres", Description: "synthetic",
			EnableSQL: []string{workload.CalibrationSQL(loops), compact}, DisableSQL: []string{workload.CalibrationSQL(0), compact}}
	}
	baseline := observer.Observer{Name: observer.Baseline, Engine: "postgres", Description: "baseline", EnableSQL: []string{compact}}
	count := func(rounds int, obs ...observer.Observer) []result.CountedCondition {
		t.Helper()
		names := []string{baseline.Name}
		for _, o := range obs {
			names = append(names, o.Name)
		}
		samples, err := counting.Run(ctx, counting.Config{Server: cs, Workload: wl.New(), Observers: append([]observer.Observer{baseline}, obs...),
			Statements: 300, Warmup: 20, Rounds: rounds, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		return counting.Summarize(names, samples)
	}
	// A call with any iteration also sets up the loop's expression once
	// per statement (plpgsql prepares it once per transaction): the
	// known work of L iterations is fixed + L x per iteration, both
	// found from two loop counts. In the same experiment, loop counts
	// that add about 1% and 5% to the statement's work are then found at
	// the size those two predict.
	const few, many = 100, 1000
	sized := map[string]int{"calibration-1%": 6, "calibration-5%": 43}
	obs := []observer.Observer{calibration("few", few), calibration("many", many)}
	for _, name := range slices.Sorted(maps.Keys(sized)) {
		obs = append(obs, calibration(name, sized[name]))
	}
	counted := count(1, obs...)
	base := counted[0].Backend
	perLoop := (counted[2].Backend - counted[1].Backend) / (many - few)
	fixed := counted[1].Backend - base - few*perLoop
	t.Logf("baseline %.0f instructions per statement; %.2f per loop iteration, %.0f once per statement with any", base, perLoop, fixed)
	want := map[string]float64{}
	for name, loops := range sized {
		want[name] = 100 * (fixed + float64(loops)*perLoop) / base
	}
	for _, c := range counted[3:] {
		got := c.BackendChange
		t.Logf("%s: expected %+.3f%%, counted %+.3f%% [%+.3f, %+.3f]", c.Name, want[c.Name], got.Pct, got.Low, got.High)
		if math.Abs(got.Pct-want[c.Name]) > 0.1 {
			t.Errorf("%s: counted %+.3f%%; want %+.3f%% to within 0.1 points", c.Name, got.Pct, want[c.Name])
		}
	}
}

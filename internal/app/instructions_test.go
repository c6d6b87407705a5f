package app

import (
	"context"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/counting"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/workload"
)

// The calibration observer adds a known number of loop iterations of
// server work to every statement. Counted, the work of one iteration is
// found from two numbers of them; observers of about 1% and 5% more
// instructions are recovered at the size it predicts, to within a tenth
// of a percentage point.
func TestInstructionsRecoverCalibration(t *testing.T) {
	recoverCalibration(t, calibration{workload: workload.Calibrated, statements: 300, warmup: 20, sessions: 1,
		few: 100, many: 1000, sized: map[string]int{"calibration-1%": 6, "calibration-5%": 43}, within: 0.1})
}

// The same on study 3's mix (a tenth of its rows, as the study counts
// it; the first 30 statements of a block, which keeps the suite's load
// down), each execution of the mix followed by the calibration's call:
// synthetic observers of about 1% and 5% more instructions per execution
// are found at their size to within 0.05 point in one run of each loop
// count (one round: one memory layout for all, and the calibration's
// loop moves nothing else in memory). One session: with two at once the
// count also holds their contention, which a loaded machine grows.
func TestInstructionsRecoverCalibrationMix(t *testing.T) {
	recoverCalibration(t, calibration{workload: "dss-mix-calibrated", shrink: 10, statements: 30, warmup: 0, sessions: 1,
		few: 100, many: 5000, sized: map[string]int{"calibration-1%": 720, "calibration-5%": 3620}, within: 0.05})
}

// calibration is a check of counting against the calibration observer:
// few and many loops find the work of one, the sized ones must be found
// within that many points of what it predicts.
type calibration struct {
	workload                     string
	shrink                       int // the dataset's rows divided by it (0: all)
	statements, warmup, sessions int
	few, many                    int
	sized                        map[string]int
	within                       float64
}

func recoverCalibration(t *testing.T, cal calibration) {
	servertest.SkipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	wl, err := workload.Lookup(cal.workload)
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := dataset.Lookup(wl.Dataset)
	if cal.shrink > 0 {
		if wl, err = wl.WithParam("shrink", cal.shrink); err != nil {
			t.Fatal(err)
		}
		if ds, err = ds.Shrunk(cal.shrink); err != nil {
			t.Fatal(err)
		}
	}
	target, err := OpenServer(ctx, "postgres", engine.Options{Log: t.Logf}, "--dsn")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	if err := engine.Prepare(ctx, target, workload.PostgreSQL, wl, ds, t.Logf); err != nil {
		t.Fatal(err)
	}
	cs := target.(engine.CountedServer)
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
	// A call with any iteration also sets up the loop's expression once
	// per statement (plpgsql prepares it once per transaction): the
	// known work of L iterations is fixed + L x per iteration, both
	// found from two loop counts. In the same experiment, the sized loop
	// counts are then found at the size those two predict.
	obs := []observer.Observer{baseline, calibration("few", cal.few), calibration("many", cal.many)}
	for _, name := range slices.Sorted(maps.Keys(cal.sized)) {
		obs = append(obs, calibration(name, cal.sized[name]))
	}
	samples, err := counting.Run(ctx, counting.Config{Server: cs, Workload: wl.Counted().New(), Observers: obs,
		Statements: cal.statements, Warmup: cal.warmup, Sessions: cal.sessions, Rounds: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	counted := counting.Summarize(observer.Names(obs), samples, 0)
	base := counted[0].Backend
	perLoop := (counted[2].Backend - counted[1].Backend) / float64(cal.many-cal.few)
	fixed := counted[1].Backend - base - float64(cal.few)*perLoop
	t.Logf("baseline %.0f instructions per statement; %.2f per loop iteration, %.0f once per statement with any", base, perLoop, fixed)
	for _, c := range counted[3:] {
		want := 100 * (fixed + float64(cal.sized[c.Name])*perLoop) / base
		got := c.BackendChange
		t.Logf("%s: expected %+.3f%%, counted %+.3f%% [%+.3f, %+.3f]", c.Name, want, got.Pct, got.Low, got.High)
		if math.Abs(got.Pct-want) > cal.within {
			t.Errorf("%s: counted %+.3f%%; want %+.3f%% to within %g points", c.Name, got.Pct, want, cal.within)
		}
	}
}

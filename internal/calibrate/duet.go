package calibrate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// sizingLoops is the sizing observer's loop count: a cost about as
// large as the statement itself. A twin's server is CPU bound under its
// quota, so its CPU per statement reads as the inverse of its throughput
// and is as noisy, a few percent a phase: against a cost of a statement's
// size, one iteration's cost is read to a few percent, where against a
// third of one it read to a quarter (and each size with it).
const sizingLoops = 1000

// sizingLoopsAtLoad is the sizing observer's loop count at a load: its
// twin must keep the rate, so the cost is a quarter of a statement's (at
// 50% load it keeps its twin about 63% busy), and below the quota CPU
// per statement is read to a fraction of a percent a phase.
const sizingLoopsAtLoad = sizingLoops / 4

// maxLoadPct is calibrate's highest --load: the sizing twin, a quarter
// busier, and the largest size's must keep the rate under their quota.
const maxLoadPct = 70

// NullName is the calibration observer that adds nothing: it is switched
// like the others (the same statement, the same apply and revert), so it
// is an A/A comparison through the observers' own path.
const NullName = "calibration-0pct"

// calibrateDuet sizes each synthetic observer where it is measured, in a
// duet's twins under their CPU quota, and then measures them by duet:
// the default method's accuracy on known costs.
//
// Sizing is a duet of its own, as long as the measuring one's arms: one
// observer of sizingLoops iterations, whose server CPU added per
// statement (twin against twin, from each twin server's own CPU
// accounting) gives one iteration's cost, and the other twin's the
// statement's, S. Every statement runs the loop's first
// iteration with or without calibration (the function loops 0..n), so
// the call's fixed part is in S and what an observer adds is its
// iterations alone. An effect e is then X = e/(100-e) * S of server CPU,
// X/(S+X) of a CPU-bound server's throughput: the server's own share,
// as the duet measures it with each twin's load outside its quota.
func calibrateDuet(ctx context.Context, o Options, out Output) error {
	logf := report.Notes(out.Stderr)
	loops, where := sizingLoops, "each twin's server under its quota"
	if o.LoadPct > 0 {
		loops, where = sizingLoopsAtLoad, fmt.Sprintf("each twin's server at %g%% load", o.LoadPct)
	}
	sizing := []Calibration{{Name: "calibration-sizing", Loops: loops}}
	logf("calibration: sizing one loop iteration by duet (%d phases, %d iterations against none)", o.Phases, loops)
	quiet := out
	quiet.Stdout = io.Discard
	sum, err := duetRun(ctx, o, filepath.Join(o.Out, "sizing"), sizing, o.Phases, false, 0, quiet)
	if err != nil {
		return fmt.Errorf("calibration sizing: %w", err)
	}
	cost, err := sizedCost(sum, sizing[0])
	if err != nil {
		return err
	}
	rate := askedRate(sum)
	if rate > 0 {
		where += fmt.Sprintf(", %.0f statements/s", rate)
	}
	logf("calibration: %.4f µs of server CPU per loop iteration; %.1f µs per statement without it (%s)", cost.LoopUS, cost.ServerUS, where)
	cals := sizeForServerShare(o.Effects, cost)
	sum, runErr := duetRun(ctx, o, o.Out, cals, o.Phases, o.Count, rate, out)
	if sum == nil {
		return runErr
	}
	fmt.Fprintf(out.Stdout, "\ncalibration: %.4f µs of server CPU per loop iteration; without calibration %.1f µs of server CPU per statement (%s)\n",
		cost.LoopUS, cost.ServerUS, where)
	printRecovered(out.Stdout, *sum, cals)
	if err := writeCalibration(out.Stdout, o.Out, cost, cals); err != nil {
		return err
	}
	return runErr
}

// askedRate is the arrival rate the sizing duet ran at (its --load's
// probe found it), 0 in a closed loop: the measuring duet runs at the
// same rate, so each size is read in the conditions it was taken in.
func askedRate(sum *result.Summary) float64 {
	for _, cs := range sum.Conditions {
		if cs.Rate != nil {
			return cs.Rate.AskedPerS
		}
	}
	return 0
}

// sizedCost reads one loop iteration's cost from the sizing duet.
func sizedCost(sum *result.Summary, c Calibration) (LoopCost, error) {
	i := slices.IndexFunc(sum.Conditions, func(cs result.ConditionSummary) bool { return cs.Name == c.Name })
	if i < 0 || sum.Conditions[i].ServerCost == nil {
		return LoopCost{}, fmt.Errorf("calibration sizing: the duet measured no server CPU per statement for %s (each twin's server must be in a cgroup of its own)", c.Name)
	}
	sc := sum.Conditions[i].ServerCost
	cost := LoopCost{LoopUS: sc.Added.US / float64(c.Loops), ServerUS: sc.BaseUS}
	if !(cost.LoopUS > 0) || sc.Added.CILow <= 0 {
		return cost, fmt.Errorf("calibration sizing: %d loop iterations added %.2f µs [%.2f, %.2f] per statement; want a cost told apart from 0",
			c.Loops, sc.Added.US, sc.Added.CILow, sc.Added.CIHigh)
	}
	return cost, nil
}

// sizeForServerShare sizes a synthetic observer for each effect, in
// percent of the server's CPU per statement with it (X/(S+X)), after a
// null one (NullName) that adds nothing.
func sizeForServerShare(effects []float64, cost LoopCost) []Calibration {
	cals := []Calibration{{Name: NullName, RecoveredOn: "time overhead"}}
	for _, e := range effects {
		loops := int(math.Round(e / (100 - e) * cost.ServerUS / cost.LoopUS))
		x := float64(loops) * cost.LoopUS
		cals = append(cals, Calibration{
			Name: fmt.Sprintf("calibration-%s", strings.NewReplacer(".", "-").Replace(fmt.Sprintf("%gpct", e))), TargetPct: e,
			Loops: loops, ExtraUS: x, RecoveredOn: "time overhead",
			ExpectedPct: 100 * x / (cost.ServerUS + x), ExpectedCPUPct: 100 * x / cost.ServerUS,
		})
	}
	return cals
}

// duetRun runs the calibration observers cals by duet in phases phases,
// the results in dir, with the counted part when count; at rate
// arrivals a second when rate > 0, else at o.LoadPct's when set.
func duetRun(ctx context.Context, o Options, dir string, cals []Calibration, phases int, count bool, rate float64, out Output) (*result.Summary, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "calibration-observers.yaml")
	if err := os.WriteFile(file, observerFile(cals), 0o600); err != nil {
		return nil, err
	}
	s := spec.Default()
	s.Workload, s.Method, s.ObserverFile, s.Out = Workload, result.MethodDuet, file, dir
	s.Clients, s.Seed, s.Rounds = o.Clients, o.Seed, phases
	s.Duration, s.Warmup = app.DefaultDuetDuration, app.DefaultDuetWarmup
	s.Count.After = count
	s.Choose("rounds", "duration", "warmup", "clients", "seed", "count")
	switch {
	case rate > 0:
		s.Rate = rate
		s.Choose("rate")
	case o.LoadPct > 0:
		s.LoadPct = o.LoadPct
		s.Choose("load")
	default:
		s.ClosedLoop = true
	}
	if o.ClientWork > 0 {
		s.Params = map[string]int{"client-work": o.ClientWork}
		s.Choose("client-work")
	}
	for _, c := range cals {
		s.Observers = append(s.Observers, c.Name)
	}
	c, err := app.ResolveIn(s, out)
	if err != nil {
		return nil, err
	}
	out.Command = []string{"obsbench", "calibrate", "--method", "duet"}
	return c.Run(ctx, out)
}

// observerFile is the observer file of cals: each sets the calibration
// function's loop count, and back to none.
func observerFile(cals []Calibration) []byte {
	type entry struct {
		Name        string   `json:"name"`
		Engine      string   `json:"engine"`
		Description string   `json:"description"`
		EnableSQL   []string `json:"enable_sql"`
		DisableSQL  []string `json:"disable_sql"`
	}
	var es []entry
	for _, c := range cals {
		es = append(es, entry{Name: c.Name, Engine: "postgres",
			Description: fmt.Sprintf("synthetic: %d loop iterations per statement", c.Loops),
			EnableSQL:   []string{workload.CalibrationSQL(c.Loops)}, DisableSQL: []string{workload.CalibrationSQL(0)}})
	}
	// JSON is YAML: the observer file reader takes it as it is.
	b, _ := json.MarshalIndent(es, "", "  ")
	return append(b, '\n')
}

package app

import (
	"context"
	"io"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// What a composition of experiments (a study) asks of one: what it
// runs, and the steps of running it.

// WorkloadMeta is the workload the experiment runs, its parameters set.
func (c Experiment) WorkloadMeta() workload.Meta { return c.wl }

// Dataset is the workload's dataset at its scale.
func (c Experiment) Dataset() dataset.Dataset { return c.ds }

// ObserverList is the baseline and the observers compared with it.
func (c Experiment) ObserverList() []observer.Observer { return c.observers }

// Dialect is the SQL dialect of the experiment's engine.
func (c Experiment) Dialect() workload.Dialect { return c.info.Dialect }

// ThreadsFor is the driver's thread count for clients sessions:
// --driver-threads if given, else the default for that many.
func (c Experiment) ThreadsFor(clients int) int { return c.driverThreads(clients) }

// Run runs the experiment, writes results.jsonl and summary.json, and
// prints its report; the summary whenever some runs were made, also with
// an error.
func (c Experiment) Run(ctx context.Context, out Output) (*result.Summary, error) {
	return runExperiment(ctx, c, out)
}

// PrintPlan prints what Run would do (--dry-run), starting and changing
// nothing.
func (c Experiment) PrintPlan(ctx context.Context, w io.Writer) error { return dryRunOf(ctx, c, w) }

// Gate fails a finished experiment whose observers exceeded
// --max-overhead (*OverheadError); err, when the experiment failed.
func (c Experiment) Gate(sum *result.Summary, err error) error { return checkGate(c, sum, err) }

// Sweep runs the experiment once per session count (Sessions), each in
// a directory of its own under Out, reporting per perUnit statements.
func (c Experiment) Sweep(ctx context.Context, perUnit int, out Output) ([]report.SweepPoint, error) {
	return runSweep(ctx, c, perUnit, out)
}

// GateSweep applies --max-overhead to every experiment of a sweep.
func (c Experiment) GateSweep(points []report.SweepPoint, err error) error {
	return gateSweep(c, points, err)
}

// CheckOut refuses a results directory that already holds an experiment,
// a sweep or a study, before anything starts.
func CheckOut(dir string) error { return checkOut(dir) }

// OpenServer opens the server of engine name: the external one of o.DSN,
// or a managed one.
func OpenServer(ctx context.Context, name string, o engine.Options) (engine.Server, error) {
	return openServer(ctx, name, o)
}

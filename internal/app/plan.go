package app

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/counting"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// Per step, beside what the step runs: the restarts and the apply and
// revert of a phase or round on a managed server; once, the servers'
// start, the dataset's load and a twin's copy. About what the default
// run's record shows on a small machine; an estimate, said to be one.
const (
	stepOverhead  = 1500 * time.Millisecond
	setupOverhead = 30 * time.Second
)

// planManaged prints what a run on a managed server would do and about
// how long it would take, starting nothing: the --dry-run of a managed
// server, which obsbench owns whole.
func planManaged(c Experiment, w io.Writer) error {
	c.planSetting(w)
	observers := c.observerCount()
	step := c.Warmup + c.Duration
	upTo := ""
	if c.Params["blocks"] > 0 || c.Replay.Passes > 0 {
		upTo = "up to " // fixed work: the duration only caps a step
	}
	var steps int
	var counted time.Duration
	switch c.Method {
	case result.MethodDuet, result.MethodSplitDuet, result.MethodSplit:
		var err error
		if steps, err = c.planPaired(w, observers, upTo); err != nil {
			return err
		}
	case result.MethodRounds:
		steps = (1 + observers) * c.Rounds
		fmt.Fprintf(w, "%d conditions (the baseline and each observer) x %d rounds = %d runs of %s%v warm-up + %v measured\n",
			1+observers, c.Rounds, steps, upTo, c.Warmup, c.Duration)
	case result.MethodAlternation:
		arms := 1 + observers
		if c.MeasureCollectors {
			arms++
		}
		steps, step = arms*c.Alternation.Reps, c.Warmup+c.Alternation.Duration
		fmt.Fprintf(w, "%d arms (the A/A and each observer%s) x %d alternation runs = %d runs of %v warm-up + %v, switching in phases of %d-%d s\n",
			arms, collectorNote(c), c.Alternation.Reps, steps, c.Warmup, c.Alternation.Duration, c.Alternation.PhaseMin, c.Alternation.PhaseMax)
	case result.MethodInstructions:
		counted = counting.PrintPlan(w, c.Count, 1+observers, c.Rounds, c.wl.LongStatements, "")
	default:
		fmt.Fprintf(w, "with --method %s the plan depends on what a reload switches on the server, which it tells once started ('obsbench observers -v' says it for each observer); the run prints its plan as it starts\n", c.Method)
		return nil
	}
	switch {
	case c.counting:
		counted = counting.PrintPlan(w, c.Count, 1+observers, c.Count.Rounds, c.wl.LongStatements, "then counted (--count): ")
	case c.countMissing != "":
		fmt.Fprintf(w, "not counted: %s\n", c.countMissing)
	}
	switch {
	case c.Method.Counted() && counted == 0:
		fmt.Fprintf(w, "\nestimate: none: a counted run's time depends on the mix's statements under valgrind\n")
	case c.Method.Counted():
		fmt.Fprintf(w, "\nestimate: about %v (the counted runs, the servers' start and the dataset's load)\n", (setupOverhead + counted).Round(time.Minute))
	case upTo != "":
		fmt.Fprintf(w, "\nestimate: none: each step is fixed work, done when its statements are (at most %v), which depends on the server's speed; the progress line estimates from the first steps\n", step)
	default:
		total := setupOverhead + time.Duration(steps)*(step+stepOverhead) + counted + c.probeTime()
		fmt.Fprintf(w, "\nestimate: about %v (each step's time, %v a step for restarts, and %v for starting the servers and loading the dataset%s%s)\n",
			total.Round(time.Minute), stepOverhead, setupOverhead, countedNote(counted), probeNote(c.probeTime()))
	}
	if c.Study != "" && !c.Method.Counted() {
		fmt.Fprintf(w, "study %s: its own steps (a capture, a reliability run, its other workloads) come beside this plan and are not in the estimate\n", c.Study)
	}
	if len(c.Sessions) > 0 {
		fmt.Fprintf(w, "the whole plan once per session count (%d counts)\n", len(c.Sessions))
	}
	if c.Dose.Sweeps() {
		fmt.Fprintf(w, "the whole plan once per value of %s (%s)\n", c.Dose.Setting, strings.Join(c.Dose.Values, ", "))
	}
	return nil
}

// planPaired prints the phases of a duet, a split or both, and returns
// how many there are.
func (c Experiment) planPaired(w io.Writer, observers int, upTo string) (steps int, err error) {
	switch c.Method {
	case result.MethodDuet:
		arms := 1 + observers
		if c.MeasureCollectors {
			arms++
		}
		steps = arms * c.Rounds
		fmt.Fprintf(w, "%d arms (the A/A and each observer%s) x %d phases = %d phases of %s%v warm-up + %v measured, both twins at once\n",
			arms, collectorNote(c), c.Rounds, steps, upTo, c.Warmup, c.Duration)
	case result.MethodSplitDuet:
		arms := 1 + observers
		steps = 2 * arms * c.Rounds
		head := fmt.Sprintf("%d duet arms (the A/A and each observer, both twins at once) and %d split arms (the A/A and each observer's per-session part, both groups of %d sessions at once on the first twin at its share) x %d phases = %d phases of %s%v warm-up + %v measured",
			arms, arms, c.Clients/2, c.Rounds, steps, upTo, c.Warmup, c.Duration)
		return steps, c.printSplit(w, head)
	case result.MethodSplit:
		steps = (1 + observers) * c.Rounds
		head := fmt.Sprintf("%d arms (the A/A and each observer's per-session part) x %d phases = %d phases of %s%v warm-up + %v measured, both groups of %d sessions at once on the one server",
			1+observers, c.Rounds, steps, upTo, c.Warmup, c.Duration, c.Clients/2)
		return steps, c.printSplit(w, head)
	}
	return steps, nil
}

// planSetting prints the server, the workload and the method of the
// plan.
func (c Experiment) planSetting(w io.Writer) {
	fmt.Fprintf(w, "dry run: nothing is started\n\n")
	fmt.Fprintf(w, "a managed %s server, started from the installed binaries in a private temporary directory and removed at the end\n", c.Engine)
	if c.Method.Twins() {
		fmt.Fprintf(w, "and its twin, a copy of it made once the dataset is loaded; each twin with its load in a cgroup at an equal CPU quota\n")
	}
	if c.Method.Counted() {
		fmt.Fprintf(w, "workload %s, dataset %s\n", c.Workload, c.ds.Name)
	} else if c.Workers > 1 {
		fmt.Fprintf(w, "workload %s, %d clients in %d worker processes, dataset %s\n", c.Workload, c.Clients, c.Workers, c.ds.Name)
	} else {
		fmt.Fprintf(w, "workload %s, %d clients, dataset %s\n", c.Workload, c.Clients, c.ds.Name)
	}
	switch {
	case c.Rate > 0:
		fmt.Fprintf(w, "at a fixed rate of %g units/s (Poisson, latency from each unit's scheduled start)\n", c.Rate)
	case c.loadDefaulted:
		fmt.Fprintf(w, "%s; its rate found first by short probes (a closed loop, then up to 3 at a rate)\n", spec.DefaultLoadNote)
	case c.LoadPct > 0:
		fmt.Fprintf(w, "at the rate that keeps %g%% of the baseline's server CPU busy, found first by short probes (a closed loop, then up to 3 at a rate)\n", c.LoadPct)
	case len(c.Loads) > 0:
		fmt.Fprintf(w, "a sweep of loads, %s%% of the baseline's server CPU busy: the experiment below once at each, its rate found first by short probes\n", spec.FormatLoads(c.Loads))
	}
	if c.methodChosen {
		why := "the default where it can run"
		if c.methodWhy != "" {
			why = "not duet: " + c.methodWhy
		}
		fmt.Fprintf(w, "method %s (%s)\n", c.Method, why)
	} else {
		fmt.Fprintf(w, "method %s\n", c.Method)
	}
}

func probeNote(probes time.Duration) string {
	if probes == 0 {
		return ""
	}
	return fmt.Sprintf("; the capacity probes up to %v", probes.Round(time.Second))
}

func countedNote(counted time.Duration) string {
	if counted == 0 {
		return ""
	}
	return fmt.Sprintf("; the counted part about %v of it", counted.Round(10*time.Second))
}

func collectorNote(c Experiment) string {
	if c.MeasureCollectors {
		return ", and the wait sampler"
	}
	return ""
}

// observerCount is how many of c's observers are not the baseline: a
// plan's conditions are those and the baseline.
func (c Experiment) observerCount() int {
	n := 0
	for _, o := range c.observers {
		if o.Name != observer.Baseline {
			n++
		}
	}
	return n
}

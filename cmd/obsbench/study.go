package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/calibrate"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
	"github.com/obsbench/obsbench/internal/studyrun"
)

const studyUsage = `usage: obsbench study <name> [study flags] [run flags]
       obsbench study list
       obsbench study <name> -h

Runs a built-in study: a fixed workload, observers and method that
reproduce one of the published studies obsbench grew from, and prints the
study's own table after the usual report. Any flag of 'obsbench run' may be
given to change the defaults (e.g. --rounds 10, --duration 30s);
'obsbench study <name> -h' shows a study's defaults and its own flags.
`

func studyCmd(ctx context.Context, args []string, e env) error {
	stdout, stderr := e.stdout, e.stderr
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, studyUsage)
		if len(args) == 0 {
			return usagef("name a study (obsbench study list)")
		}
		return errHelp
	}
	engine := engineOf(args[1:])
	if args[0] == "list" {
		for _, name := range study.Names(engine) {
			st, _ := study.Lookup(engine, name)
			fmt.Fprintf(stdout, "%-18s %s\n", name, st.Title)
		}
		return nil
	}
	st, err := study.Lookup(engine, args[0])
	if err != nil {
		return usageError{Err: err}
	}
	if wantsHelp(args[1:]) {
		studyrun.Help(stdout, st)
		return errHelp
	}
	base := studyrun.Spec(st)
	// The study's own flags are parsed with the run flags, over the
	// study's spec: what the user gives wins.
	opts := studyrun.DefaultOptions(st)
	own := flag.NewFlagSet("", flag.ContinueOnError)
	ownFlags(own, st, &opts)
	s, given, resume, err := e.parseRunSpec("obsbench study "+st.Name, args[1:], stderr, base, own)
	if err != nil {
		return err
	}
	if resume != "" {
		return usagef("--resume: resume a study's experiment with 'obsbench run --resume DIR'")
	}
	opts.User = given
	return studyrun.Run(ctx, st, s, opts, e.output(commandLine("study "+st.Name, args[1:])))
}

// ownFlags binds a study's own flags (studyrun.Flags) to o.
func ownFlags(fs *flag.FlagSet, st study.Study, o *studyrun.Options) {
	for _, f := range studyrun.Flags(st) {
		switch f.Name {
		case "reliability-duration":
			fs.DurationVar(&o.ReliabilityDuration, f.Name, o.ReliabilityDuration, f.Usage)
		case "threshold":
			fs.Float64Var(&o.Threshold, f.Name, o.Threshold, f.Usage)
		case "workloads":
			fs.Func(f.Name, f.Usage, func(v string) error { o.Workloads = splitList(v); return nil })
		case "capture":
			// --capture is also a run flag (the replay's file): the
			// study reads it from the spec.
		case "capture-duration":
			fs.DurationVar(&o.CaptureDuration, f.Name, o.CaptureDuration, f.Usage)
		}
	}
}

// engineOf finds --engine among run flags, a run's by default: it picks
// the study, whose settings are the other flags' defaults.
func engineOf(args []string) string {
	for i, a := range args {
		switch {
		case (a == "--engine" || a == "-engine") && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--engine="), strings.HasPrefix(a, "-engine="):
			return a[strings.Index(a, "=")+1:]
		}
	}
	return spec.Default().Engine
}

// wantsHelp says whether args ask for help.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

// calibrateCmd checks that obsbench recovers a known overhead.
func calibrateCmd(ctx context.Context, args []string, e env) error {
	stdout := e.stdout
	fs := commandFlags("calibrate")
	effects := fs.String("effects", "3,10", "comma-separated overheads to build, in percent (0.5 to 50)")
	o := calibrate.Options{}
	fs.StringVar((*string)(&o.Method), "method", string(result.MethodDuet), "credit-top1: duet (each synthetic cost sized in a twin under its quota, then measured by duet, as run measures by default) or alternation (default duet)")
	fs.IntVar(&o.Phases, "phases", app.DefaultDuetPhases, "--method duet: the duet's phases per calibration observer (default "+strconv.Itoa(app.DefaultDuetPhases)+", as run's)")
	fs.BoolVar(&o.Count, "count", true, "--method duet: count each calibration's instructions per statement after the timed phases, as obsbench run does (a cross-check of each size)")
	fs.DurationVar(&o.AltDuration, "alt-duration", spec.Default().Alternation.Duration, "--method alternation: measured time of each alternation run")
	fs.IntVar(&o.AltRounds, "alt-rounds", 1, "--method alternation: alternation runs per calibration observer")
	fs.StringVar(&o.Workload, "workload", "credit-top1", "credit-top1 (a loop of one short statement, by --method) or dss-mix (the decision-support mix, rounds of fixed work compared query by query)")
	fs.IntVar(&o.Rounds, "rounds", 8, "dss-mix: rounds (a baseline and each calibration run per round)")
	fs.IntVar(&o.Blocks, "blocks", 1, "dss-mix: blocks of 101 executions per session and run")
	fs.IntVar(&o.Shrink, "shrink", 1, "dss-mix: the dss dataset with 1/N of its rows, the queries' parameters drawn over them")
	fs.IntVar(&o.Clients, "clients", 0, "client sessions (default: 16 for credit-top1, 8 for dss-mix)")
	fs.IntVar(&o.ClientWork, "client-work", 0, "credit-top1: µs of CPU each session spends in the driver before each statement (a heavier client: the figure is the server's and should not move with it)")
	fs.Float64Var(&o.LoadPct, "load", spec.DefaultDuetLoad, "--method duet: size and measure at a fixed arrival rate, the one at which the baseline keeps this percentage of a twin's quota busy (default "+strconv.Itoa(spec.DefaultDuetLoad)+", as run's --load for a duet)")
	closed := fs.Bool("closed-loop", false, "--method duet: size and measure in a closed loop instead, each twin's server saturated at its quota and the overhead read as throughput lost (as run's --closed-loop)")
	fs.Uint64Var(&o.Seed, "seed", 0, "seed of the run order and phases (default: from the clock)")
	fs.StringVar(&o.Out, "out", "", "directory for results (default: obsbench-results/calibrate-<time>)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	// Each workload is measured its own way: a flag of the other's is
	// refused rather than ignored.
	mix := o.Workload == "dss-mix"
	var wrong, wrongMethod []string
	loadGiven := false
	fs.Visit(func(f *flag.Flag) {
		loadGiven = loadGiven || f.Name == "load"
		alt, duet := f.Name == "alt-duration" || f.Name == "alt-rounds", f.Name == "phases" || f.Name == "count" || f.Name == "method" || f.Name == "load" || f.Name == "closed-loop"
		switch {
		case ((alt || duet) && mix) || (!alt && !duet && !mix && (f.Name == "rounds" || f.Name == "blocks" || f.Name == "shrink")) || (mix && f.Name == "client-work"):
			wrong = append(wrong, "--"+f.Name)
		case (alt && o.Method.Twins()) || (duet && f.Name != "method" && !o.Method.Twins()):
			wrongMethod = append(wrongMethod, "--"+f.Name)
		}
	})
	if len(wrong) > 0 {
		return usagef("%s does not apply to --workload %s (credit-top1 takes --method, --client-work, --phases, --count, --load and --closed-loop, or with --method alternation --alt-duration and --alt-rounds; dss-mix --rounds, --blocks and --shrink)", strings.Join(wrong, ", "), o.Workload)
	}
	if len(wrongMethod) > 0 {
		return usagef("%s does not apply to --method %s (duet takes --phases, --count, --load and --closed-loop, alternation --alt-duration and --alt-rounds)", strings.Join(wrongMethod, ", "), o.Method)
	}
	if *closed && loadGiven {
		return usagef("--closed-loop with --load: a closed loop has no arrival rate; give one of them")
	}
	if mix || *closed || !o.Method.Twins() {
		o.LoadPct = 0
	}
	if mix {
		o.Method = ""
	}
	if o.Clients == 0 {
		o.Clients = 16
		if mix {
			o.Clients = 8
		}
	}
	for _, e := range splitList(*effects) {
		v, err := strconv.ParseFloat(e, 64)
		if err != nil {
			return usagef("--effects %q: want percentages from 0.5 to 50, e.g. 3,10", *effects)
		}
		o.Effects = append(o.Effects, v)
	}
	return calibrate.Run(ctx, o, e.output(nil))
}

// reportCmd renders the report of a finished (or interrupted) experiment.
func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := commandFlags("report")
	format := fs.String("format", string(spec.FormatHTML), "html (writes DIR/report.html), or text, markdown, json, csv, benchstat, series (each measured second as CSV) on standard output")
	wide := fs.Bool("v", false, "with --format text: every column (the reference's statements/s, p50, server and driver CPU, each worker, the duet twins)")
	rest, err := parseInterspersed(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usagef("one results directory at a time: %s", strings.Join(rest, " "))
	}
	dir := ""
	if len(rest) == 1 {
		dir = rest[0]
	}
	return report.RenderDir(dir, spec.Format(*format), *wide, stdout)
}

// redactArgs removes the password from a --dsn or --twin-dsn argument.
func redactArgs(args []string) []string {
	out := append([]string{}, args...)
	for i, a := range out {
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (name != "dsn" && name != "twin-dsn") {
			continue
		}
		switch {
		case hasValue:
			k := strings.Index(a, "=") + 1
			out[i] = a[:k] + engine.RedactDSN(a[k:])
		case i+1 < len(out):
			out[i+1] = engine.RedactDSN(out[i+1])
		}
	}
	return out
}

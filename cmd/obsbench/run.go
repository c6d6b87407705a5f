package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// runFlags binds the flags of 'obsbench run' to s: each flag's default is
// s's value, so that a study's settings show as its defaults and the
// user's flags override them. Each flag is named as the setting it sets
// (spec.Chosen).
func runFlags(fs *flag.FlagSet, s *spec.Spec) {
	for _, bind := range []func(*flag.FlagSet, *spec.Spec){serverFlags, workloadFlags, methodFlags, countFlags, workerFlags, outputFlags} {
		bind(fs, s)
	}
}

// serverFlags binds the flags of the server measured: its engine, an
// external one by DSN, a managed one's standby.
func serverFlags(fs *flag.FlagSet, s *spec.Spec) {
	fs.StringVar(&s.Engine, "engine", s.Engine, "database engine: "+engineChoices(anyEngine)+externalOnly())
	fs.StringVar(&s.DSN, "dsn", s.DSN, "external server to measure (postgres: libpq connection string or URL; mariadb: user:password@tcp(host:3306)/database; sqlserver: sqlserver://user:password@host:1433); default: a managed server started from the local binaries (postgres and mariadb)")
	fs.BoolVar(&s.AllowChanges, "allow-changes", s.AllowChanges, "with --dsn: allow obsbench to change the external server's settings (reverted after each run)")
	fs.StringVar((*string)(&s.Standby), "standby", string(s.Standby), "managed server only: start a standby, async or sync (PostgreSQL: streaming standby named in synchronous_standby_names; MariaDB: replica, semi-synchronous with sync), or none")
	fs.DurationVar(&s.StandbyDelay, "standby-delay", s.StandbyDelay, "with --standby: one-way delay between primary and standby (e.g. 1ms), added by obsbench's TCP relay")
}

// workloadFlags binds the flags of what the sessions run: a registered
// workload with its parameters, a replay, the user's scripts, and the
// observers compared.
func workloadFlags(fs *flag.FlagSet, s *spec.Spec) {
	fs.StringVar(&s.Workload, "workload", s.Workload, "workload to run: "+strings.Join(workload.Names(), ", ")+"; replay (with --capture); pgbench or sql (your own scripts, with --script)")
	fs.Func("observers", "comma-separated `names` of observers to compare with baseline (default: the catalog's default set; see 'obsbench observers')"+defaultOf(strings.Join(s.Observers, ",")),
		func(v string) error { s.Observers = splitList(v); return nil })
	fs.StringVar(&s.ObserverFile, "observer-file", s.ObserverFile, "YAML file with more observers (same schema as the catalog)")
	fs.IntVar(&s.Clients, "clients", s.Clients, "client sessions (default: the workload's, 16 for credit-top1)")
	fs.Float64Var(&s.Rate, "rate", s.Rate, "a fixed arrival rate, units of work per second over all sessions (a script's transactions, otherwise statements), Poisson as pgbench -R schedules them, each unit's latency counted from its scheduled start: the cost of an observer at a load below saturation, in server CPU and latency (default: a duet at --load 50, anything else a closed loop, as fast as the server answers)")
	fs.Func("load", "a fixed arrival rate at which the baseline keeps this `percent`age of its server's CPU busy (e.g. 50), found first by short probes (a closed loop, then up to three at a rate; what they found is printed), instead of --rate; several, ascending (25,50,75,90), sweep the load: one experiment each under --out/load-P, and the latency against load per observer (default: 50 for a duet, which --closed-loop takes out)",
		func(v string) error {
			ps, err := spec.ParseLoads(v)
			if err != nil {
				return err
			}
			s.LoadPct, s.Loads = ps[0], nil
			if len(ps) > 1 {
				s.LoadPct, s.Loads = 0, ps
			}
			return nil
		})
	fs.BoolVar(&s.ClosedLoop, "closed-loop", s.ClosedLoop, "with a duet, which runs at --load 50 unless told otherwise: run the sessions as fast as the server answers instead, the overhead read as the throughput lost with each twin's server saturated at its CPU quota (the published studies' question)")
	fs.DurationVar(&s.LatencyLimit, "latency-limit", s.LatencyLimit, "at a rate (--rate, --load, or a duet's default half load): count units that take longer than this from their scheduled start as late, and skip those already later when a session is free (pgbench -L)")
	fs.IntVar(&s.DriverThreads, "driver-threads", s.DriverThreads, "OS threads of the load driver (one event loop each on PostgreSQL and local MariaDB) (default: one per core, at most one per session)")
	fs.StringVar(&s.Replay.Capture, "capture", s.Replay.Capture, "with --workload replay: the capture file to replay (made by 'obsbench capture')")
	fs.StringVar(&s.Replay.Mode, "replay-mode", s.Replay.Mode, "with --workload replay: stress (each session's statements as fast as the server answers, in captured order) or sync (at the captured times divided by --replay-speed)")
	fs.Float64Var(&s.Replay.Speed, "replay-speed", s.Replay.Speed, "with --replay-mode sync: divide the captured times by this factor")
	fs.IntVar(&s.Replay.Passes, "replay-passes", s.Replay.Passes, "with --workload replay: replay each session this many times, then end the run (fixed work; --duration is then a cap); 0 repeats until --duration ends")
	fs.Func("script", "with --workload pgbench: a pgbench script `FILE[@WEIGHT]` or a built-in (tpcb-like, simple-update, select-only), repeatable, one chosen per transaction by weight; with --workload sql: a file of SQL statements separated by ';', run in order in a loop"+defaultOf(strings.Join(s.Script.Files, ",")),
		func(v string) error { s.Script.Files = append(s.Script.Files, v); return nil })
	fs.Func("define", "with --workload pgbench: set a script variable, `NAME=VALUE` (pgbench -D), repeatable",
		func(v string) error { s.Script.Defines = append(s.Script.Defines, v); return nil })
	fs.StringVar(&s.Script.QueryMode, "query-mode", s.Script.QueryMode, "with --workload pgbench or sql: how statements reach the server, pgbench's -M: simple (values put into the text, parsed every time; pgbench's default), extended (parameters, parsed every time; PostgreSQL only) or prepared (parsed once per session)"+defaultOf(s.Script.QueryMode))
	fs.StringVar(&s.Script.Dataset, "dataset", s.Script.Dataset, "with --workload pgbench or sql: the dataset loaded before the run (pgbench: pgbench -i's tables at --scale; sql: none, the user's own tables on --dsn)")
	for _, p := range workload.AllParams() {
		def := p.Default
		if v, ok := s.Params[p.Name]; ok {
			def = v
		}
		fs.Func(p.Name, fmt.Sprintf("%s (a workload parameter, an `int`; default %d)", p.Usage, def), func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			if s.Params == nil {
				s.Params = map[string]int{}
			}
			s.Params[p.Name] = n
			return nil
		})
	}
}

// methodFlags binds the flags of how the observers are compared, and for
// how long: rounds, a duet's twins, alternation runs.
func methodFlags(fs *flag.FlagSet, s *spec.Spec) {
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "seed of the run order (default: from the clock; printed either way)")
	fs.StringVar((*string)(&s.Method), "method", string(s.Method), "how observers are compared (default: duet on managed servers, or with --twin-dsn, where cgroups can hold each twin's CPU share; on --dsn alone, split for the observers that split and auto for the rest; auto otherwise; the run says why): auto (each observer whole, in rounds on freshly restarted servers, and beside it its switchable part by alternation when part of it stays in force; alternation alone when a reload switches all of it), alternation (the switchable part only), rounds (whole only), instructions (count the server's user-space instructions per statement under valgrind, one session at a time unless --count-sessions says more, on a managed PostgreSQL or MariaDB), duet (two twin servers driven at the same time, the observer in one of them, roles swapped phase by phase: each --rounds is one phase of --duration; the machine's drift falls on both twins alike), split (one server, its sessions in two equal groups driven at the same time, the observer's per-session part set in one group's sessions, groups swapped phase by phase: what both groups share, a preloaded library or the log's collector, is not in the figure; PostgreSQL and MariaDB), split,duet (a duet, and beside it a split of each observer on the first twin: its whole and per-session costs on the same server, and their difference, what all sessions share)")
	fs.IntVar(&s.Rounds, "rounds", s.Rounds, fmt.Sprintf("rounds; each runs every condition once, in a seeded random order (default %d; a duet's phases: %d, an even number; with --method instructions, counted runs of each condition: %d)", s.Rounds, app.DefaultDuetPhases, s.Count.Rounds))
	fs.DurationVar(&s.Duration, "duration", s.Duration, "measured time of each run (default "+s.Duration.String()+"; a duet's phase: "+app.DefaultDuetDuration.String()+")")
	fs.DurationVar(&s.Warmup, "warmup", s.Warmup, "unmeasured warm-up before each run's measured time (default "+s.Warmup.String()+"; a duet's: "+app.DefaultDuetWarmup.String()+")")
	fs.Float64Var(&s.TwinCPUs, "twin-cpus", s.TwinCPUs, "with --method duet: the CPU quota each twin's server is held to, in CPUs (its load runs apart, outside the quota); default 0: 25% of this machine's CPUs each, so that the twins, loads included, never compete for a core with each other or with what runs beside them")
	fs.StringVar(&s.TwinDSN, "twin-dsn", s.TwinDSN, "with --method duet and --dsn: the second external server, distinct from --dsn and holding the same dataset")
	fs.DurationVar(&s.Alternation.Duration, "alt-duration", s.Alternation.Duration, "measured time of each alternation run")
	fs.IntVar(&s.Alternation.PhaseMin, "phase-min", s.Alternation.PhaseMin, "shortest alternation phase, seconds (its first second is dropped)")
	fs.IntVar(&s.Alternation.PhaseMax, "phase-max", s.Alternation.PhaseMax, "longest alternation phase, seconds")
	fs.IntVar(&s.Alternation.Reps, "alt-rounds", s.Alternation.Reps, "alternation runs per observer")
	fs.Float64Var(&s.TargetResolution, "target-resolution", s.TargetResolution, "overhead in percent each comparison should detect (80% power): by alternation an A/A pilot run sizes the observers' runs; by duet, once the planned phases are done, the A/A arm's say how many more every arm runs")
	fs.DurationVar(&s.MaxTime, "max-time", s.MaxTime, "with --target-resolution: the longest the whole experiment may take; with --method duet and no --rounds or --target-resolution: the timed phases' budget, which sets how many phases each arm runs (in blocks of four, at least "+strconv.Itoa(app.DefaultDuetPhases)+")")
	fs.BoolVar(&s.MeasureCollectors, "measure-collectors", s.MeasureCollectors, "add an arm that measures the wait sampler's own overhead (--waits defaults to 10ms then): by duet, the sampler in one twin and not the other; otherwise an alternation that pauses and resumes it")
}

// countFlags binds the flags of the counted runs, under valgrind:
// --method instructions, or --count after the timed runs.
func countFlags(fs *flag.FlagSet, s *spec.Spec) {
	fs.BoolVar(&s.Count.After, "count", s.Count.After, "after the timed runs on a managed "+app.CountingProducts()+", count each condition's server instructions per statement under valgrind too, shown beside the timed figures (a few seconds a run); --count=false leaves it out")
	fs.IntVar(&s.Count.Rounds, "count-rounds", s.Count.Rounds, "with --count: counted runs of each condition (2 or more give an interval)")
	fs.IntVar(&s.Count.Statements, "count-statements", s.Count.Statements, "with --method instructions or --count: the workload's statements counted in each run")
	fs.IntVar(&s.Count.Sessions, "count-sessions", s.Count.Sessions, "with --method instructions or --count: sessions that run at once in each counted phase, each its share of the mix as in a timed run (e.g. --clients of a study); the figures are per statement over all of them")
	fs.IntVar(&s.Count.Shrink, "count-shrink", s.Count.Shrink, "with --method instructions or --count, on a workload whose dataset shrinks (dss-mix): count on the dataset with 1/N of its rows (a counted server of its own); default: the timed runs' --shrink")
	fs.BoolVar(&s.Count.PerQuery, "count-per-query", s.Count.PerQuery, "with --method instructions or --count on a managed PostgreSQL, on a workload whose statements are named (dss-mix): also count each query apart, the session's instructions from each execution's start to the next statement's (the server under callgrind: about twice as slow as the plain count, and the backend's system calls are not shown)")
	fs.Float64Var(&s.Count.Width, "count-width", s.Count.Width, "with --method instructions or --count: the half-width in points each counted change aims at; a condition still wider after the first rounds (4 or more) is counted more rounds beside the baseline, as many as those rounds' spread asks for, at most 3 times as many (0: the first rounds only)")
	fs.IntVar(&s.Count.Warmup, "count-warmup", s.Count.Warmup, "with --method instructions or --count: statements run before the counted ones in each session, their cost cancelled by a control session")
}

// workerFlags binds the flags of worker processes, and what starts them.
func workerFlags(fs *flag.FlagSet, s *spec.Spec) {
	fs.IntVar(&s.Workers, "workers", s.Workers, "spread the sessions over this many worker processes ('obsbench worker'), started by --launcher; 0: run them in this process")
	fs.StringVar((*string)(&s.Launcher), "launcher", string(s.Launcher), "with --workers: what starts the workers: local (processes on this machine) or kubernetes (an Indexed Job of worker pods, with --image)")
	fs.StringVar(&s.Kubernetes.Image, "image", s.Kubernetes.Image, "with --launcher kubernetes: the worker pods' image, with obsbench in it (deploy/Dockerfile)")
	fs.StringVar(&s.Kubernetes.Namespace, "namespace", s.Kubernetes.Namespace, "with --launcher kubernetes: the workers' namespace (default: the coordinator pod's, or the kubeconfig context's)")
	fs.StringVar(&s.Kubernetes.Kubeconfig, "kubeconfig", s.Kubernetes.Kubeconfig, "with --launcher kubernetes: kubeconfig file (default: in a pod its service account, else $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&s.Coordinator.Advertise, "advertise", s.Coordinator.Advertise, "with --workers: the IP address the workers reach this obsbench at over TCP, where it listens (kubernetes default: $POD_IP; local default: none, a Unix socket)")
	fs.IntVar(&s.Coordinator.Port, "coordinator-port", s.Coordinator.Port, "with --advertise: the TCP port this obsbench listens on for its workers (default: 7400 for kubernetes, any free port for local)")
	fs.Func("worker-prefix", "with --launcher local: `words` each worker's command line starts with, {index} replaced by its index (e.g. 'taskset -c {index}' or 'ip netns exec w{index}'; split at spaces, no quoting)",
		func(v string) error { s.WorkerPrefix = strings.Fields(v); return nil })
	fs.StringVar(&s.Kubernetes.CPU, "worker-cpu", s.Kubernetes.CPU, "with --launcher kubernetes: each worker pod's CPU request and limit (e.g. 2)")
	fs.StringVar(&s.Kubernetes.Memory, "worker-memory", s.Kubernetes.Memory, "with --launcher kubernetes: each worker pod's memory request and limit (e.g. 512Mi)")
}

// outputFlags binds the flags of what is recorded beside throughput,
// where, and how it is reported and gated.
func outputFlags(fs *flag.FlagSet, s *spec.Spec) {
	fs.StringVar(&s.Out, "out", s.Out, "directory for results.jsonl and summary.json (default: obsbench-results/<time>)")
	waits := &waitsValue{&s.Waits}
	fs.Var(waits, "waits", "sample the active sessions' waits every this often (e.g. 10ms), or off")
	fs.BoolVar(&s.KernelWaits, "kernel-waits", s.KernelWaits, "with --waits on a managed server: look a session that reports no wait up in /proc (its kernel wait channel, e.g. a write to the logging collector's pipe) before counting it as CPU; --kernel-waits=false: the engine's own wait events only")
	fs.BoolVar(&s.Counters, "counters", s.Counters, "record the engine's activity counters (transactions, WAL, checkpoints, log bytes) as rates; --counters=false turns it off")
	fs.StringVar((*string)(&s.OnFailure), "on-failure", string(s.OnFailure), "when a run fails (connection dropped, server restarted, statement error): continue with the next run, or stop")
	fs.BoolVar(&s.Wide, "v", false, "with --format text: the table with every column (the reference's statements/s, p50, server and driver CPU, each worker, the duet twins)")
	fs.StringVar((*string)(&s.Format), "format", string(s.Format), "report on standard output as text, markdown, json, csv, benchstat or series (each measured second as CSV; report.html is written to --out either way)")
	fs.Func("max-overhead", "exit with code 3 when an observer's overhead exceeds this `percent`age with 95% confidence (its whole interval above it); with --method instructions, its counted change in the session's instructions per statement", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		s.MaxOverhead = &f
		return err
	})
	fs.Func("max-counted-overhead", "exit with code 3 when an observer's counted change in the session's instructions per statement (--count, or --method instructions) exceeds this `percent`age with 95% confidence: a gate free of timing noise, beside or instead of --max-overhead", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		s.MaxCountedOverhead = &f
		return err
	})
	fs.Func("max-latency-added", "at a rate (--rate, --load, or a duet's default half load), by duet or split: exit with code 3 when an observer adds more than this many `ms` to the p99 latency with 95% confidence (its whole interval above it), or cannot keep the rate in most of its runs while the side without it keeps it in all", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		s.MaxLatencyAdded = &f
		return err
	})
	fs.Func("dose", "a dose of one observer (--observers NAME): its `SETTING=V1,V2,...` given each value in turn, from the least to the most (e.g. auto_explain.sample_rate=0.01,0.1,0.5,1), one experiment each under --out/dose-V, and the overhead against the dose; with --max-overhead P, the largest value up to which each stays under P with 95% confidence",
		func(v string) error {
			d, err := spec.ParseDose(v)
			s.Dose = &d
			return err
		})
	fs.Func("sessions", "concurrency sweep: run the whole experiment once per session `count` (e.g. 1,2,4,8,16,32) and print overhead per count; results in --out/sessions-N"+defaultOf(spec.FormatSessions(s.Sessions)),
		func(v string) (err error) { s.Sessions, err = spec.ParseSessions(v); return err })
}

// defaultOf is a usage's default note for a flag.Func, which the flag
// package cannot show itself.
func defaultOf(v string) string {
	if v == "" {
		return ""
	}
	return " (default " + v + ")"
}

// waitsValue is --waits: off, or an interval.
type waitsValue struct{ d *time.Duration }

func (w *waitsValue) String() string {
	if w.d == nil || *w.d == 0 {
		return "off"
	}
	return w.d.String()
}

func (w *waitsValue) Set(v string) error {
	if v == "off" || v == "0" {
		*w.d = 0
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want an interval from 1ms to 10s (e.g. 10ms), or off")
	}
	*w.d = d
	return nil
}

// parseRunSpec parses run flags over base: the spec they make, the flags
// given marked chosen beside base's choices. Flags of extra (a study's
// own) are parsed with them. resume is --resume's directory.
func (e env) parseRunSpec(name string, args []string, help io.Writer, base spec.Spec, extra ...*flag.FlagSet) (s spec.Spec, given spec.Chosen, resume string, err error) {
	s = base
	s.Params = maps.Clone(base.Params)
	s.Script.Files, s.Script.Defines = slices.Clone(base.Script.Files), slices.Clone(base.Script.Defines)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	helpUsage(fs, "run")
	runFlags(fs, &s)
	fs.BoolVar(&s.DryRun, "dry-run", false, "print what the run would do, and start and change nothing: with --dsn every change and statement it would make on the server (reading only); on a managed server its plan and about how long it would take")
	for _, x := range extra {
		x.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
	}
	fs.StringVar(&resume, "resume", "", "continue the interrupted experiment in this results directory: finished runs are kept, the rest run")
	if err := parseFlags(fs, expandShort(args), help); err != nil {
		return s, nil, "", err
	}
	given = spec.Chosen{}
	fs.Visit(func(f *flag.Flag) { s.Choose(f.Name); given[f.Name] = true })
	if !e.countUnasked && !s.IsChosen("count") {
		s.Count.After = false
	}
	if resume != "" && fs.NFlag() != 1 {
		return s, nil, "", usagef("--resume takes no other flags: the experiment's own are in %s", filepath.Join(resume, "experiment.json"))
	}
	return s, given, resume, nil
}

func runCmd(ctx context.Context, args []string, e env) error {
	s, _, resume, err := e.parseRunSpec("obsbench run", args, e.stdout, spec.Default())
	if err != nil {
		return err
	}
	out := e.output(commandLine("run", args))
	if resume != "" {
		return app.Resume(ctx, resume, out)
	}
	return app.Execute(ctx, s, out)
}

// commandLine is the command as given, without passwords, for the record.
func commandLine(cmd string, args []string) []string {
	return append(strings.Fields("obsbench "+cmd), redactArgs(args)...)
}

// splitList splits a comma-separated value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

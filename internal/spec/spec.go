// Package spec is the typed description of one experiment: everything
// that decides what obsbench runs and how, as plain values. Flags fill
// it, studies and sweeps build and change it, a results directory records
// it (experiment.json) and --resume reads it back; a remote load
// generator will receive it. It holds no process state: no connections,
// no open files, no clocks.
package spec

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/obsbench/obsbench/internal/result"
)

// Spec is one experiment.
type Spec struct {
	// Engine names a registered engine (postgres, mariadb, sqlserver).
	Engine string `json:"engine"`
	// DSN is the external server; empty: a managed one. Recorded
	// without its password.
	DSN          string `json:"dsn,omitempty"`
	AllowChanges bool   `json:"allow_changes,omitempty"`
	// Standby, on a managed server: none, async or sync; StandbyDelay is
	// the one-way delay between primary and standby.
	Standby      Standby       `json:"standby"`
	StandbyDelay time.Duration `json:"standby_delay"`

	// Workload is a registered workload's name, or "replay" of Replay.
	Workload string `json:"workload"`
	// Params are the workload parameters set, by name.
	Params map[string]int `json:"params,omitempty"`
	Replay Replay         `json:"replay"`
	// Script is what --workload pgbench and --workload sql run.
	Script Script `json:"script"`

	// Observers are compared with the baseline; none: the catalog's
	// default set. ObserverFile adds observers to the catalog.
	Observers    []string `json:"observers,omitempty"`
	ObserverFile string   `json:"observer_file,omitempty"`

	// Method is one of result.Methods, or empty for the run to choose.
	Method result.Method `json:"method"`
	// TwinDSN is the second external server of --method duet (a managed
	// twin is started when DSN is empty). Recorded without its password.
	TwinDSN string `json:"twin_dsn,omitempty"`
	// TwinCPUs is each twin's CPU quota in a duet; 0: DefaultTwinShare
	// of the machine's CPUs.
	TwinCPUs float64 `json:"twin_cpus,omitempty"`
	// Count configures --method instructions, and the counted part of a
	// timed experiment.
	Count Count `json:"count"`
	// Rounds of Duration each (after Warmup) for round-based conditions.
	Rounds   int           `json:"rounds"`
	Duration time.Duration `json:"duration"`
	Warmup   time.Duration `json:"warmup"`
	// Alternation configures the alternation runs.
	Alternation Alternation `json:"alternation"`
	// TargetResolution, when > 0, sizes alternation runs to detect this
	// overhead in percent, within MaxTime.
	TargetResolution float64       `json:"target_resolution,omitempty"`
	MaxTime          time.Duration `json:"max_time"`

	// Clients are the workload's sessions; Sessions, if set, sweep them
	// (one experiment per count) instead.
	Clients int `json:"clients"`
	// Rate, when > 0, runs the sessions at a fixed arrival rate, units
	// of work per second over them all (pgbench -R), instead of as fast
	// as the server answers; LatencyLimit counts units slower than it as
	// late and skips those already later (pgbench -L).
	Rate         float64       `json:"rate,omitempty"`
	LatencyLimit time.Duration `json:"latency_limit,omitempty"`
	// LoadPct, when > 0, is the rate as a percentage of the capacity a
	// closed-loop probe of the baseline measures before the runs.
	LoadPct float64 `json:"load_pct,omitempty"`
	// Loads, if set, sweep LoadPct instead: one experiment per load.
	Loads []float64 `json:"loads,omitempty"`
	// Dose, if set, gives the one observer's setting each of its values
	// (--dose): one value, this experiment's; several, a sweep.
	Dose *Dose `json:"dose,omitempty"`
	// ClosedLoop keeps a duet's sessions as fast as the server answers,
	// where it would run at DefaultDuetLoad.
	ClosedLoop    bool  `json:"closed_loop,omitempty"`
	Sessions      []int `json:"sessions,omitempty"`
	DriverThreads int   `json:"driver_threads"` // the driver's OS threads: driver.DefaultProcs(Clients) unless given
	// Workers, when > 0, spreads the sessions over this many worker
	// processes, which Launcher starts (local: on this machine).
	Workers  int      `json:"workers,omitempty"`
	Launcher Launcher `json:"launcher,omitempty"`
	// Coordinator is where workers reach this process over TCP; its
	// zero value: a Unix socket (local) or $POD_IP:7400 (kubernetes).
	Coordinator Coordinator `json:"coordinator,omitempty"`
	// WorkerPrefix starts each local worker's command line ({index} is
	// the worker's index): ip netns exec, taskset, numactl, nice.
	WorkerPrefix []string   `json:"worker_prefix,omitempty"`
	Kubernetes   Kubernetes `json:"kubernetes,omitempty"`

	// Waits is the wait sampler's interval; 0: off.
	Waits time.Duration `json:"waits"`
	// KernelWaits, on a managed server, looks a session that reports no
	// wait up in /proc (its kernel wait channel) before counting it as CPU.
	KernelWaits       bool `json:"kernel_waits"`
	Counters          bool `json:"counters"`
	MeasureCollectors bool `json:"measure_collectors,omitempty"`

	// Seed orders the runs and draws the phases.
	Seed      uint64    `json:"seed"`
	OnFailure OnFailure `json:"on_failure"`
	// Format is how the report is printed on standard output.
	Format Format `json:"format"`
	// Wide prints the text table with every column (-v).
	Wide bool `json:"wide,omitempty"`
	// MaxOverhead, if set, fails an experiment where an observer costs
	// more, with 95% confidence.
	MaxOverhead *float64 `json:"max_overhead,omitempty"`
	// MaxCountedOverhead, if set, fails an experiment where an observer
	// adds more to the session's counted instructions per statement, with
	// 95% confidence: a gate with no timing noise in it.
	MaxCountedOverhead *float64 `json:"max_counted_overhead,omitempty"`
	// MaxLatencyAdded, if set, fails an experiment at a rate where an
	// observer adds more to the p99 latency, in ms, with 95% confidence.
	MaxLatencyAdded *float64 `json:"max_latency_added_ms,omitempty"`
	// Out is the results directory.
	Out string `json:"out"`
	// Study names the built-in study this experiment belongs to.
	Study string `json:"study,omitempty"`

	// DryRun prints what the experiment would do and starts and changes
	// nothing. Not recorded: a recorded experiment ran.
	DryRun bool `json:"-"`
	// Chosen are the settings chosen rather than left at their defaults.
	Chosen Chosen `json:"-"`
}

// Replay says how --workload replay replays a capture.
type Replay struct {
	Capture string  `json:"capture,omitempty"`
	Mode    string  `json:"mode"`
	Speed   float64 `json:"speed"`
	Passes  int     `json:"passes,omitempty"`
}

// Script says what --workload pgbench and --workload sql run.
type Script struct {
	// Files are the --script values: a file or (pgbench) a built-in
	// script's name, each with an optional @weight.
	Files []string `json:"files,omitempty"`
	// Defines are --define NAME=VALUE variables (pgbench -D).
	Defines []string `json:"defines,omitempty"`
	// Dataset is the dataset the scripts read (pgbench: pgbench -i's
	// tables; sql: none, the user's own).
	Dataset string `json:"dataset,omitempty"`
	// QueryMode is how statements reach the server: simple, extended or
	// prepared (pgbench -M); "": simple, pgbench's default.
	QueryMode string `json:"query_mode,omitempty"`
}

// Count configures --method instructions: each run counts Statements of
// the workload's statements after Warmup of them. With After, a timed
// experiment counts its conditions too, Rounds times each, once its
// timed runs are done (--count).
type Count struct {
	Statements int  `json:"statements"`
	Warmup     int  `json:"warmup"`
	After      bool `json:"after_timed,omitempty"`
	Rounds     int  `json:"rounds,omitempty"`
	// Sessions run at once in each counted phase (a mix's sessions, as
	// its timed runs have them); 0 is one.
	Sessions int `json:"sessions,omitempty"`
	// Shrink, if above 0, is the workload's --shrink for the counted
	// runs (a smaller dataset than the timed runs'); 0: the timed runs'.
	Shrink int `json:"shrink,omitempty"`
	// PerQuery counts each of the workload's queries apart too.
	PerQuery bool `json:"per_query,omitempty"`
	// Width, if above 0, is the half-width in points the counted changes
	// aim at: a condition whose interval is wider after the first rounds
	// is counted more rounds, with the baseline (counting.Plan).
	Width float64 `json:"width,omitempty"`
}

// Alternation configures alternation runs: Reps runs of Duration each,
// in phases of PhaseMin to PhaseMax seconds.
type Alternation struct {
	Duration time.Duration `json:"duration"`
	PhaseMin int           `json:"phase_min"`
	PhaseMax int           `json:"phase_max"`
	Reps     int           `json:"reps"`
}

// Durations are written as Go durations ("8s"), not nanoseconds: a
// recorded experiment is read by people too.
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec
	return json.Marshal(struct {
		plain
		StandbyDelay string `json:"standby_delay"`
		Duration     string `json:"duration"`
		Warmup       string `json:"warmup"`
		MaxTime      string `json:"max_time"`
		Waits        string `json:"waits"`
		Alternation  any    `json:"alternation"`
	}{plain(s), s.StandbyDelay.String(), s.Duration.String(), s.Warmup.String(), s.MaxTime.String(), s.Waits.String(),
		struct {
			Duration string `json:"duration"`
			PhaseMin int    `json:"phase_min"`
			PhaseMax int    `json:"phase_max"`
			Reps     int    `json:"reps"`
		}{s.Alternation.Duration.String(), s.Alternation.PhaseMin, s.Alternation.PhaseMax, s.Alternation.Reps}})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Spec) UnmarshalJSON(b []byte) error {
	type plain Spec
	var v struct {
		plain
		StandbyDelay string `json:"standby_delay"`
		Duration     string `json:"duration"`
		Warmup       string `json:"warmup"`
		MaxTime      string `json:"max_time"`
		Waits        string `json:"waits"`
		Alternation  struct {
			Duration string `json:"duration"`
			PhaseMin int    `json:"phase_min"`
			PhaseMax int    `json:"phase_max"`
			Reps     int    `json:"reps"`
		} `json:"alternation"`
	}
	// A spec recorded before kernel_waits existed sampled with the /proc
	// look-up: it keeps doing so when resumed.
	v.KernelWaits = true
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Spec(v.plain)
	s.Alternation = Alternation{PhaseMin: v.Alternation.PhaseMin, PhaseMax: v.Alternation.PhaseMax, Reps: v.Alternation.Reps}
	for _, d := range []struct {
		name, text string
		to         *time.Duration
	}{
		{"standby_delay", v.StandbyDelay, &s.StandbyDelay}, {"duration", v.Duration, &s.Duration},
		{"warmup", v.Warmup, &s.Warmup}, {"max_time", v.MaxTime, &s.MaxTime}, {"waits", v.Waits, &s.Waits},
		{"alternation.duration", v.Alternation.Duration, &s.Alternation.Duration},
	} {
		if d.text == "" {
			continue
		}
		p, err := time.ParseDuration(d.text)
		if err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
		*d.to = p
	}
	return nil
}

// Coordinator is the TCP address a coordinator listens on for its
// workers.
type Coordinator struct {
	// Advertise is the IP address workers reach the coordinator at, and
	// where it listens.
	Advertise string `json:"advertise,omitempty"`
	// Port 0: any free port (local), 7400 (kubernetes).
	Port int `json:"port,omitempty"`
}

// Kubernetes configures --launcher kubernetes.
type Kubernetes struct {
	// Image is the worker pods' image (obsbench's, see deploy/).
	Image string `json:"image,omitempty"`
	// Namespace holds the workers; empty: the coordinator pod's, or the
	// kubeconfig context's.
	Namespace  string `json:"namespace,omitempty"`
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// CPU and Memory are each worker's request and limit.
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

package result

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Summary is an experiment's outcome per condition, as written to
// summary.json. Percentages are percent numbers (12.5 means 12.5%).
type Summary struct {
	Version  int     `json:"version"`
	Engine   string  `json:"engine"`
	Server   string  `json:"server_version"`
	Workload string  `json:"workload"`
	Clients  int     `json:"clients"`
	Seed     uint64  `json:"seed"`
	Rounds   int     `json:"rounds"`
	Seconds  float64 `json:"duration_seconds"`
	// AltSeconds is the measured time of each alternation run.
	AltSeconds float64            `json:"alternation_seconds,omitempty"`
	Warmup     float64            `json:"warmup_seconds"`
	Conditions []ConditionSummary `json:"conditions"`
	// NoiseFloorPct is the 95th percentile of the differences between pairs
	// of baseline runs: overheads below it are not resolvable here. Nil
	// without two successful baseline runs.
	NoiseFloorPct *float64 `json:"noise_floor_pct"`
	// MDEPct is the smallest overhead an alternation comparison of this
	// experiment would detect with 80% power, from its A/A phases; nil
	// without alternation runs.
	MDEPct *float64 `json:"mde_pct"`
	// Method names the statistics used, multiple-comparison correction
	// included.
	Method   string   `json:"method"`
	Warnings []string `json:"warnings,omitempty"`
	// Environment is where and how the experiment ran; nil in summaries
	// written before it was recorded.
	Environment *Environment `json:"environment,omitempty"`
	// WaitProfile names the engine's own wait profile the conditions'
	// engine waits (WaitSummary.Engine) were read from; nil when waits
	// were not sampled, and in summaries written before it was recorded.
	WaitProfile *WaitProfile `json:"wait_profile,omitempty"`
	// Counted is the same conditions counted in instructions after the
	// timed runs (--count), or why they were not; nil when counting was
	// not asked for, and in summaries written before it was recorded.
	Counted *Counted `json:"counted,omitempty"`
}

// WaitProfile is an engine's own account of where time went, beside the
// sampler's view of sessions.
type WaitProfile struct {
	// Source is what it is read from, and over which processes
	// ("pg_wait_sampling (all processes)").
	Source string `json:"source"`
	// Missing is why a condition may have none ("" when every condition
	// has it).
	Missing string `json:"missing,omitempty"`
}

// Environment is what a reader of the results needs to reproduce them: the
// command, the tool's version, the machine, and the server's settings that
// differ from the engine's defaults (as the experiment found the server,
// before any observer).
type Environment struct {
	Command  []string          `json:"command"`
	Obsbench string            `json:"obsbench_version"`
	Machine  Machine           `json:"machine"`
	Settings map[string]string `json:"settings_changed,omitempty"`
	// Standby describes the managed standby the primary had ("sync",
	// "async", with the delay added to its link), "" for none.
	Standby string `json:"standby,omitempty"`
	// Scripts are the user's scripts the workload ran (--workload pgbench
	// or sql), each with its checksum and weight.
	Scripts []Script `json:"scripts,omitempty"`
	// QueryMode is how those scripts' statements reached the server:
	// simple, extended or prepared (pgbench -M).
	QueryMode string `json:"query_mode,omitempty"`
}

// Script is one script a workload ran: a file (its path as given) or a
// built-in ("builtin:tpcb-like"), the SHA-256 of its text, and its weight
// among the scripts.
type Script struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Weight int    `json:"weight"`
}

// ConditionSummary aggregates the runs of one condition.
type ConditionSummary struct {
	Name       string            `json:"name"`
	Throughput ThroughputSummary `json:"throughput"`
	// Overhead is nil for the baseline itself.
	Overhead *OverheadSummary `json:"overhead"`
	// ThroughputOverhead is a duet's throughput overhead where Overhead
	// is read from server CPU per statement (Overhead.Basis), else nil.
	ThroughputOverhead *OverheadSummary `json:"throughput_overhead,omitempty"`
	// Method says how the overhead was measured.
	Method string `json:"method,omitempty"`
	// Measures says whose cost the overhead is: "whole" (the observer
	// switched on from the server as it was, restart and preloaded
	// libraries included) or "switchable part" (only what a reload
	// switches: the rest was in force on both sides of the comparison,
	// as Method names). Empty for the baselines.
	Measures string `json:"measures,omitempty"`
	// Window is what the condition's throughput, latency and CPU figures
	// are over: "runs" (whole runs) or "on phases" (an alternation run's
	// on phases, the first second of each dropped, as in the overhead).
	Window string `json:"window,omitempty"`
	// Reference is the same figures over what the overhead compares
	// with: the off phases next to the on phases (alternation) or the
	// baseline runs next to each run (rounds). Nil for the baseline.
	Reference *Reference `json:"reference,omitempty"`
	// CPUChange is the change of server CPU per statement with the
	// observer on, in percent (positive: more CPU), where it was measured
	// pairwise.
	CPUChange *ChangeSummary `json:"cpu_per_stmt_change,omitempty"`
	// Shared is, on a row measured whole whose observer was also split
	// beside it (--method split,duet), the whole overhead less the
	// per-session one, in points: what all sessions share.
	Shared *SharedSummary `json:"shared_part,omitempty"`
	// Disturbed counts runs during which other processes (and steal)
	// took clearly more of the machine than in the experiment's median
	// run (analysis.disturbances).
	Disturbed int            `json:"disturbed_runs,omitempty"`
	LatencyMS LatencySummary `json:"latency_ms"`
	Events    *Events        `json:"events"`
	CPU       CPUSummary     `json:"cpu"`
	// Waits is the condition's wait profile against the baseline's; nil
	// when waits were not sampled.
	Waits *WaitSummary `json:"waits,omitempty"`
	// Counters are the engine's activity counters, per second, median
	// over runs.
	Counters map[string]float64 `json:"counters,omitempty"`
	Failed   int                `json:"failed_runs,omitempty"`
	// RunSeconds is the median measured time of the runs: a fixed-work
	// run (a replay once) takes as long as its work.
	RunSeconds float64 `json:"run_seconds,omitempty"`
	// StatementErrors counts statements of all runs that failed and that
	// the workload went on from (a replay's); ErrorSamples are a few.
	StatementErrors int64    `json:"statement_errors,omitempty"`
	ErrorSamples    []string `json:"error_samples,omitempty"`
	// Statements is each statement's latency over the condition's window
	// (its runs, or its on phases), pooled over the runs: for workloads
	// that name their statements (a user's scripts), as pgbench -r.
	Statements []StatementLatency `json:"statements,omitempty"`
	// Transients are runs whose throughput changed level mid-run (an
	// observer heavy at first that then stopped costing).
	Transients []Transient `json:"transients,omitempty"`
	// Series is statements per second in 5-second buckets, averaged over
	// the runs that lasted that long: the shape of a run over time.
	Series []float64 `json:"series_5s,omitempty"`
	// Stratified is the comparison query by query of a mix whose
	// statements are named (dss-mix): nil for other workloads.
	Stratified *StratifiedSummary `json:"stratified,omitempty"`
	// Workers are the worker processes that ran the sessions (obsbench
	// run --workers), each over the condition's whole runs.
	Workers []WorkerSummary `json:"workers,omitempty"`
	// Duet is how the twins of a duet condition used their CPU shares.
	Duet *DuetSummary `json:"duet,omitempty"`
	// ServerCost is what the observer added to each statement's server
	// CPU, twin against twin (a duet's, from each twin server's own CPU
	// accounting); nil for the other methods.
	ServerCost *ServerCost `json:"server_cost,omitempty"`
	// Rate is how the condition kept a fixed arrival rate and its
	// latency counted from the schedule (a run at --rate); nil for a
	// closed loop.
	Rate *RateSummary `json:"rate,omitempty"`
}

// RateSummary is a condition at a fixed arrival rate: how its runs (the
// observer's side) and its reference (the twin or group without it) kept
// the schedule, their latency from each unit's scheduled start, median
// over the runs, and what the observer added to it, phase against phase.
type RateSummary struct {
	AskedPerS float64 `json:"asked_per_second"`
	// Side and Reference are the observer's side and the side without
	// it (nil: none in the same seconds, a method that is not paired).
	Side      RateSide  `json:"side"`
	Reference *RateSide `json:"reference,omitempty"`
	// P50Added, P99Added and P999Added are the latency the observer
	// added, in ms,
	// with their intervals at the experiment's level; nil when either
	// side was saturated, or the method is not paired.
	P50Added  *LatencyAdded `json:"p50_added_ms,omitempty"`
	P99Added  *LatencyAdded `json:"p99_added_ms,omitempty"`
	P999Added *LatencyAdded `json:"p999_added_ms,omitempty"`
}

// RateSide is one side of a comparison at a rate, over its runs.
type RateSide struct {
	Runs         int     `json:"runs"`
	AchievedPerS float64 `json:"achieved_per_second"`
	// SaturatedRuns could not keep the rate (result.RateResult.Saturated);
	// BacklogMax is the largest backlog among them. Latency is then nil:
	// it would be what the queue made, not the server.
	SaturatedRuns int   `json:"saturated_runs"`
	BacklogMax    int64 `json:"backlog_max,omitempty"`
	Skipped       int64 `json:"skipped,omitempty"`
	Late          int64 `json:"late,omitempty"`
	// Latency is from each unit's scheduled start to its end, LagP99 the
	// p99 of its start's delay behind the schedule.
	Latency  *RateLatency `json:"latency_ms,omitempty"`
	LagP99MS float64      `json:"lag_p99_ms"`
	// BusyCPUs is the server CPU the side used, in CPUs, where it was
	// read (a duet's twin or a split's group).
	BusyCPUs float64 `json:"busy_cpus,omitempty"`
	// CapacityPerS is the units a second the side's server would complete
	// with its whole CPU share busy, at the CPU per unit it spent at this
	// rate (share × achieved ÷ busy); where the share is known (a duet's
	// twin). A unit takes less CPU at saturation than below it, so the
	// server would do somewhat more.
	CapacityPerS float64 `json:"capacity_per_second,omitempty"`
}

// WithCapacity sets each side's CapacityPerS from the CPU share its
// server is held to (a duet's twin's; 0: unknown, nothing set).
func (s *RateSummary) WithCapacity(share float64) {
	if s == nil || share <= 0 {
		return
	}
	for _, side := range []*RateSide{&s.Side, s.Reference} {
		if side != nil && side.BusyCPUs > 0 {
			side.CapacityPerS = share * side.AchievedPerS / side.BusyCPUs
		}
	}
}

// RateLatency is latency from the schedule, in ms.
type RateLatency struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
}

// LatencyAdded is a latency difference in ms with its interval.
type LatencyAdded struct {
	MS      float64 `json:"ms"`
	CILow   float64 `json:"ci_low"`
	CIHigh  float64 `json:"ci_high"`
	Verdict string  `json:"verdict"`
}

// ServerCost is the server CPU an observer added per statement.
type ServerCost struct {
	// BaseUS is the server CPU per statement without the observer (the
	// other twin's, median over the phases), in µs.
	BaseUS float64 `json:"base_us_per_stmt"`
	// Added is the µs per statement the observer's twin's server spent
	// more, with its interval.
	Added AddedSummary `json:"added_us_per_stmt"`
	// Share is Added as a share of the observer's twin's server CPU per
	// statement, X/(S+X) in percent: the throughput a CPU-bound server
	// whose clients run on other machines loses.
	Share ChangeSummary `json:"server_share_pct"`
}

// DuetSummary is how a duet condition's twins used their CPU, median over
// its phases.
type DuetSummary struct {
	Phases int `json:"phases"`
	// ShareCPUs is each twin's CPU quota, 0 when not isolated.
	ShareCPUs float64 `json:"share_cpus"`
	// OnCPUs and OffCPUs are the CPU the observer's twin and the other
	// used (server and load), in CPUs.
	OnCPUs  float64 `json:"on_cpus"`
	OffCPUs float64 `json:"off_cpus"`
	// OnThrottledS and OffThrottledS are the seconds each was held back
	// by its quota in a phase.
	OnThrottledS  float64 `json:"on_throttled_s"`
	OffThrottledS float64 `json:"off_throttled_s"`
	// LoadApart says each twin's load ran outside its server's quota, in a
	// group of its own: OnCPUs and OffCPUs are then the servers' alone,
	// OnLoadCPUs and OffLoadCPUs the loads', and LoadThrottledS the most
	// a phase's loads were held back (more than 0: the load's share bound,
	// not only the server's).
	LoadApart      bool    `json:"load_apart,omitempty"`
	OnLoadCPUs     float64 `json:"on_load_cpus,omitempty"`
	OffLoadCPUs    float64 `json:"off_load_cpus,omitempty"`
	LoadThrottledS float64 `json:"load_throttled_s,omitempty"`
}

// WorkerSummary is what one worker ran of a condition's runs and what it
// cost its machine, median over the runs.
type WorkerSummary struct {
	Worker     int     `json:"worker"`
	Host       string  `json:"host"`
	Sessions   int     `json:"sessions"`
	Throughput float64 `json:"throughput"`
	// CPUPct is the worker process's CPU as a share of all its
	// machine's cores, median; CPUPctMax the highest of a run.
	CPUPct    float64 `json:"cpu_pct"`
	CPUPctMax float64 `json:"cpu_pct_max"`
	// ClockErrorMS is the largest error bound of the worker's clock
	// offset, measured before each run.
	ClockErrorMS float64 `json:"clock_error_ms"`
}

// StratifiedSummary compares a condition's runs with the baseline run of
// their round query by query, each query against itself, the per-query
// ratios weighted by the query's share of the baseline's cost.
type StratifiedSummary struct {
	// Pairs is how many runs had a baseline run to compare with (their
	// round's).
	Pairs int `json:"pairs"`
	// Time is on latency per execution, in the overhead's form
	// (1 - 1/ratio: the throughput the mix loses).
	Time *OverheadSummary `json:"time"`
	// CPU is the change of server CPU per execution (positive: more),
	// CPUOverhead the same comparison in the overhead's form, with its
	// verdict; both nil, and CPUNote saying why, when the server's CPU
	// could not be read per execution.
	CPU         *ChangeSummary   `json:"server_cpu_change,omitempty"`
	CPUOverhead *OverheadSummary `json:"server_cpu_overhead,omitempty"`
	CPUNote     string           `json:"server_cpu_note,omitempty"`
	// CPUAdded is the server CPU an execution gains, in µs, the queries
	// weighted by their precision, so the cheapest count most
	// (stats.StratifiedAdded): a fixed cost per statement at its size, a
	// cost that grows with the statement's work at a short statement's.
	// Nil when CPU is.
	CPUAdded *AddedSummary `json:"server_cpu_added_us,omitempty"`
	// Queries is each query's mean cost with the observer and in the
	// baseline runs compared with, pooled over the runs.
	Queries []QueryEffect `json:"queries"`
}

// AddedSummary is an added cost per execution with its interval.
type AddedSummary struct {
	US         float64 `json:"us"`
	CILow      float64 `json:"ci_low"`
	CIHigh     float64 `json:"ci_high"`
	Confidence float64 `json:"confidence"`
	// Verdict is "more", "less", "no detectable difference" or "too few
	// samples to tell".
	Verdict string `json:"verdict"`
}

// QueryEffect is one query of a mix with and without an observer.
type QueryEffect struct {
	Query string `json:"query"`
	// WeightPct is the query's share of the baseline's total latency.
	WeightPct     float64  `json:"weight_pct"`
	Executions    int64    `json:"executions"`
	MS            float64  `json:"mean_ms"`
	BaselineMS    float64  `json:"baseline_mean_ms"`
	CPUMS         *float64 `json:"server_cpu_mean_ms,omitempty"`
	BaselineCPUMS *float64 `json:"baseline_server_cpu_mean_ms,omitempty"`
}

// Transient is a change of throughput level inside one run.
type Transient struct {
	Round int `json:"round"`
	// Kind is "recovered" (heavy at first, then near the baseline),
	// "degraded" (began to cost mid-run) or "shift".
	Kind string `json:"kind"`
	// AtSeconds is when the new level began, from the window's start.
	AtSeconds int `json:"at_seconds"`
	// BeforePct and AfterPct are the overhead against the baseline's
	// level before and after, in percent.
	BeforePct float64 `json:"before_pct"`
	AfterPct  float64 `json:"after_pct"`
	Note      string  `json:"note"`
}

// WaitSummary is a condition's wait profile: the share of active-session
// samples each wait took, against the baseline's (an alternation run's off
// phases, or the baseline runs).
type WaitSummary struct {
	// Samples is the number of active-session samples; ActiveSessions the
	// mean number of sessions active at a sample.
	Samples        int64   `json:"samples"`
	ActiveSessions float64 `json:"active_sessions"`
	// Top are the ten largest waits, benign ones included.
	Top []WaitShare `json:"top"`
	// Signatures are waits absent or negligible in the baseline and
	// material here: what would point a DBA at this observer.
	Signatures []string `json:"signatures"`
	// SamplerCPUPct is the CPU the wait sampler's queries cost the server,
	// as % of the machine, median over runs; nil when not measured.
	SamplerCPUPct *float64 `json:"sampler_cpu_pct,omitempty"`
	// Engine is the top of the engine's own wait profile (pg_wait_sampling's
	// samples, performance_schema's wait time),
	// over every process, as shares of its samples.
	Engine []WaitShare `json:"engine,omitempty"`
}

// WaitShare is one wait's share of samples, in percent.
type WaitShare struct {
	Wait string  `json:"wait"`
	Pct  float64 `json:"pct"`
	// BaselinePct is its share in the baseline, nil where there is none.
	BaselinePct *float64 `json:"baseline_pct,omitempty"`
	// DeltaPct is Pct - BaselinePct, in percentage points.
	DeltaPct  *float64 `json:"delta_pct,omitempty"`
	Signature bool     `json:"signature,omitempty"`
}

// ThroughputSummary is statements per second.
type ThroughputSummary struct {
	Median float64   `json:"median"`
	Runs   []float64 `json:"runs"`
}

// OverheadSummary is 1 - T(condition)/T(baseline) in percent, with its
// confidence interval.
type OverheadSummary struct {
	// Basis is what a duet's overhead is read from: BasisThroughput (the
	// twins' throughput ratio) or BasisServerCPU (the ratio of their
	// server CPU per statement, where the observer's twin used its CPU as
	// the other did); empty for the other methods, whose basis is
	// throughput.
	Basis       string   `json:"basis,omitempty"`
	Pct         float64  `json:"pct"`
	CILow       float64  `json:"ci_low"`
	CIHigh      float64  `json:"ci_high"`
	Confidence  float64  `json:"confidence"`
	Significant bool     `json:"significant"`
	Verdict     string   `json:"verdict"`
	Warnings    []string `json:"warnings,omitempty"`
}

// Bases of a duet's overhead.
const (
	BasisThroughput = "throughput"
	BasisServerCPU  = "server_cpu_per_stmt"
)

// Measured says whether o holds an estimate: the analysis could compare
// the condition with the baseline (its verdict does not begin "not
// measured").
func (o *OverheadSummary) Measured() bool {
	return o != nil && !strings.HasPrefix(o.Verdict, "not measured")
}

// TopWaits is how many waits a WaitSummary's Top lists at most.
const TopWaits = 10

// ChangeSummary is a relative change in percent with its interval, at the
// confidence of the experiment's overheads.
type ChangeSummary struct {
	Pct    float64 `json:"pct"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
}

// SharedSummary is a difference of two overheads in points, its interval
// at the experiment's level, and the basis both were read on.
type SharedSummary struct {
	Pct    float64 `json:"pct"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	Basis  string  `json:"basis,omitempty"`
}

// Measures values.
const (
	MeasuresWhole      = "whole"
	MeasuresSwitchable = "switchable part"
	// MeasuresPerSession is a split's: what the observer costs the
	// sessions it is set in, without what it shares with the others.
	MeasuresPerSession = "per-session"
)

// Window values.
const (
	WindowRuns     = "runs"
	WindowOnPhases = "on phases"
)

// Reference is what a condition is compared with, medians over its runs:
// for a run, the mean of the two neighbours it is compared with.
type Reference struct {
	StmtsPerS float64        `json:"stmts_per_s"`
	LatencyMS LatencySummary `json:"latency_ms"`
	// ServerUSPerStmt is nil when the server's CPU was not measured.
	ServerUSPerStmt *float64 `json:"server_us_per_stmt"`
}

// LatencySummary is the median over runs of each run's percentile.
type LatencySummary struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// CPUSummary is the median over runs, as % of the machine; ServerPct is nil
// when the server is not on this machine.
type CPUSummary struct {
	ServerPct *float64 `json:"server_pct"`
	DriverPct float64  `json:"driver_pct"`
	// Per-statement CPU in microseconds.
	ServerUSPerStmt *float64 `json:"server_us_per_stmt"`
	DriverUSPerStmt float64  `json:"driver_us_per_stmt"`
}

// SummaryVersion is the version of summary.json's form
// (summary.schema.json). Version 2 added measures, window and
// reference, and made an unmeasured noise floor null.
const SummaryVersion = 2

// WriteSummary writes s as indented JSON to path.
func WriteSummary(path string, s Summary) error {
	s.Version = SummaryVersion
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// ReadSummary reads a summary.json written by WriteSummary.
func ReadSummary(path string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	// Version 1 is version 2 without its additions.
	if s.Version < 1 || s.Version > SummaryVersion {
		return s, fmt.Errorf("%s: summary version %d; this obsbench reads versions 1 to %d", path, s.Version, SummaryVersion)
	}
	return s, nil
}

package result

// The measurements a run is made of: what the load driver counted, the CPU
// of server and driver, the waits sampled, and the machine. They are plain
// data; the packages that measure them (driver, collect) fill them.

// Latency percentiles of the measured statements, in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// SecondLatency is the latency of the statements completed in one second,
// in milliseconds: how many, and their percentiles.
type SecondLatency struct {
	Count int64   `json:"n"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// DriverResult is what one run of the load driver measured.
type DriverResult struct {
	Clients int `json:"clients"`
	// Seconds is the length of the measured window.
	Seconds float64 `json:"seconds"`
	// Measured counts statements completed inside the window.
	Measured int64 `json:"measured"`
	// Executed counts every statement completed, warm-up and the statements
	// in flight when the window closed included: what an observer that
	// records every statement must have recorded.
	Executed int64 `json:"executed"`
	// Throughput is Measured / Seconds.
	Throughput float64 `json:"throughput"`
	// Units counts the units of work completed inside the window: a
	// script's transactions, else its statements (Measured); what a
	// rate (--rate) counts.
	Units int64 `json:"units,omitempty"`
	// PerSecond[s][i] counts statements session s completed in second i of
	// the window.
	PerSecond [][]int64 `json:"per_second"`
	Latency   Latency   `json:"latency_ms"`
	// LatencyPerSecond is the latency of the statements completed in
	// each second of the window, all sessions together, read from
	// buckets 1/8 of their value wide (within 6.25%).
	LatencyPerSecond []SecondLatency `json:"latency_ms_per_second,omitempty"`
	// LatencyBy is the latency of the statements completed in the
	// seconds of each of the driver's labels.
	LatencyBy map[string]Latency `json:"latency_ms_by_label,omitempty"`
	// Errors counts statements that failed with a statement error the workload goes on from
	// (counted in Executed too: the server ran them); ErrorSamples are
	// the first few distinct messages.
	Errors       int64    `json:"errors,omitempty"`
	ErrorSamples []string `json:"error_samples,omitempty"`
	// Statements is the latency of each statement of a workload that
	// names them (a user's scripts), over the window, as pgbench -r
	// reports it; StatementsBy the same over the seconds of each label.
	Statements   []StatementLatency            `json:"statements,omitempty"`
	StatementsBy map[string][]StatementLatency `json:"statements_by_label,omitempty"`
	// Executions are the statements completed in the window one by one,
	// when the run kept them (a mix of few, long statements);
	// ExecutionsNote says why their server CPU is missing, if it is.
	Executions     []Execution `json:"executions,omitempty"`
	ExecutionsNote string      `json:"executions_note,omitempty"`
	// Workers are the worker processes that ran the sessions, when they
	// were spread over several (obsbench run --workers); the counts above
	// are theirs merged.
	Workers []WorkerLoad `json:"workers,omitempty"`
	// Groups are each group's sessions' result, when the run divided its
	// sessions into groups (a split: session i in group i % len(Groups)).
	Groups []DriverResult `json:"groups,omitempty"`
	// ServerSeconds is the server CPU the sessions' own server processes
	// or threads used over the window, in seconds, where the run read it
	// (driver.Config.ServerCPU); 0: not read.
	ServerSeconds float64 `json:"server_seconds,omitempty"`
	// Rate is how the sessions kept a fixed arrival rate, when the run
	// had one (driver.Config.Rate); nil for a closed loop.
	Rate *RateResult `json:"rate,omitempty"`
}

// RateResult is how a run at a fixed arrival rate kept its schedule: the
// units of work (a script's transaction, or a statement) that arrived in
// the measured window, how many were served, skipped or late, and their
// latency counted from each one's scheduled start, as pgbench -R counts
// it, so that a unit that waited behind a stalled one is charged for the
// wait.
type RateResult struct {
	// Asked is the arrival rate asked for, per second, over the sessions.
	Asked float64 `json:"asked_per_second"`
	// Scheduled counts the arrivals due inside the window; Started those
	// of them a session took up (on time or late), Skipped those dropped
	// because they were already later than the latency limit when a
	// session was free, and Backlog those still waiting when the window
	// closed. Scheduled = Started + Skipped + Backlog.
	Scheduled int64 `json:"scheduled"`
	Started   int64 `json:"started"`
	Skipped   int64 `json:"skipped,omitempty"`
	Backlog   int64 `json:"backlog"`
	// Completed counts units that ended inside the window; Late those of
	// them that took longer than the limit from their scheduled start.
	Completed int64 `json:"completed"`
	Late      int64 `json:"late,omitempty"`
	// Achieved is Completed per second of the window.
	Achieved float64 `json:"achieved_per_second"`
	// LimitMS is the latency limit (0: none).
	LimitMS float64 `json:"latency_limit_ms,omitempty"`
	// Latency runs from each completed unit's scheduled start to its end;
	// Lag from its scheduled start to when a session sent it.
	Latency Latency `json:"latency_ms"`
	Lag     Latency `json:"lag_ms"`
	// LatencyPerSecond is, for the units completed in each second of the
	// window, their latency from the scheduled start (as the statements'
	// DriverResult.LatencyPerSecond, read from buckets).
	LatencyPerSecond []SecondLatency `json:"latency_ms_per_second,omitempty"`
}

// Saturated says the sessions could not keep the rate: the arrivals
// still waiting when the window closed are over a hundredth of those due
// in it and over a quarter of a second's, so that the latency is what a
// growing queue made, not the server (a queue shorter than that comes
// and goes with the server's pauses, a CPU quota's period, or a busy
// machine's); or, under a latency limit, which bounds the queue, over a
// hundredth of them were skipped.
func (r *RateResult) Saturated() bool {
	return r != nil && (float64(r.Backlog) > max(1, float64(r.Scheduled)/100, r.Asked/4) ||
		float64(r.Skipped) > max(1, float64(r.Scheduled)/100))
}

// WorkerLoad is what one worker process ran of a run, and what it cost
// its machine: a worker short of CPU limits the load it offers.
type WorkerLoad struct {
	Worker int    `json:"worker"`
	Host   string `json:"host"`
	// FirstSession and Sessions say which of the run's sessions it ran.
	FirstSession int     `json:"first_session"`
	Sessions     int     `json:"sessions"`
	Throughput   float64 `json:"throughput"`
	// CPU is the worker process's CPU over the measured window, Pct its
	// share of all its machine's cores.
	CPU CPU `json:"cpu"`
	// ClockOffsetMS is the worker's clock minus the coordinator's,
	// measured before the run, and ClockErrorMS the half round trip that
	// bounds the measurement's error.
	ClockOffsetMS float64 `json:"clock_offset_ms"`
	ClockErrorMS  float64 `json:"clock_error_ms"`
}

// Execution is one statement completed in a run's window.
type Execution struct {
	// Statement numbers it among the workload's (Statements' order), -1
	// for a workload that does not name its statements.
	Statement int `json:"stmt"`
	Session   int `json:"session"`
	// EndUS is when it completed, from the window's start.
	EndUS     int64 `json:"end_us"`
	LatencyUS int64 `json:"latency_us"`
	// ServerCPUUS is the CPU the session's server process or thread spent
	// from the statement's start to its end (user and kernel), -1 when
	// it could not be read.
	ServerCPUUS int64 `json:"server_cpu_us"`
}

// StatementLatency is how many times one statement completed in a window
// and their mean latency.
type StatementLatency struct {
	Statement string  `json:"statement"`
	Count     int64   `json:"count"`
	MeanMS    float64 `json:"mean_ms"`
	// CPUMeanMS is the mean server CPU of the CPUCount completions whose
	// server CPU was read (Execution.ServerCPUUS).
	CPUCount  int64   `json:"cpu_count,omitempty"`
	CPUMeanMS float64 `json:"cpu_mean_ms,omitempty"`
}

// CPUSecond is the CPU spent in one second of the measured window, in seconds
// of CPU (2.0 is both cores of a 2-core machine).
type CPUSecond struct {
	Server float64 `json:"server"`
	Driver float64 `json:"driver"`
	// Other is every other process's CPU: the machine's busy time less the
	// server's and the driver's. On a shared machine it is the noise.
	Other float64 `json:"other"`
	// Steal is time the hypervisor gave this machine's CPUs to others.
	Steal float64 `json:"steal"`
}

// Noise summarises how disturbed a window was, as % of the machine.
type Noise struct {
	OtherPct float64 `json:"other_pct"`
	StealPct float64 `json:"steal_pct"`
}

// Usage is the CPU a window used.
type Usage struct {
	// Server is nil when the server is not on this machine.
	Server *CPU  `json:"server_cpu"`
	Driver CPU   `json:"driver_cpu"`
	Noise  Noise `json:"noise"`
	// PerSecond is the CPU of each second (the last may be shorter).
	PerSecond []CPUSecond `json:"cpu_per_second,omitempty"`
}

// CPU is CPU time used during a window.
type CPU struct {
	Seconds float64 `json:"seconds"`
	// Pct is Seconds as a share of all the machine's cores over the window.
	Pct float64 `json:"pct"`
}

// Waits is a wait profile: how many session samples showed each wait.
type Waits struct {
	// Ticks is how many times the sessions were sampled.
	Ticks int64 `json:"ticks"`
	// Counts maps a label to the number of active-session samples with it:
	// the engine's wait ("Lock:tuple"), "OS:<kernel function>" for a
	// session the engine calls running but that the kernel has blocked
	// (a write to a full pipe shows as OS:pipe_write), or CPU.
	Counts map[string]int64 `json:"counts"`
}

// Add adds o's samples to w.
func (w *Waits) Add(o Waits) {
	if w.Counts == nil {
		w.Counts = map[string]int64{}
	}
	w.Ticks += o.Ticks
	for k, n := range o.Counts {
		w.Counts[k] += n
	}
}

// Total is the number of session samples.
func (w Waits) Total() int64 {
	var t int64
	for _, n := range w.Counts {
		t += n
	}
	return t
}

// Machine describes the computer obsbench ran on.
type Machine struct {
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memory_bytes"`
	Kernel      string `json:"kernel"`
	CPU         string `json:"cpu,omitempty"`
}

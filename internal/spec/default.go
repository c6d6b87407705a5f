package spec

import (
	"time"

	"github.com/obsbench/obsbench/internal/driver"
)

// Defaults of a timed experiment on one server (--method auto, rounds and
// alternation), where no duet can run: each observer measured whole
// (rounds) and its switchable part (alternation). Six rounds is the least
// at which a rank test over eight comparisons can be significant at all
// (5 against 5 runs: p >= 2/252, over the 0.05/8 each interval is held
// to).
const (
	defaultRounds   = 6
	defaultDuration = 8 * time.Second
	defaultWarmup   = 2 * time.Second
	// An alternation run of 60 s holds about 10 on phases of 2-4 s with off
	// phases on both sides: enough for a paired interval over four
	// comparisons (8 pairs needed).
	defaultAltDuration = 60 * time.Second
)

// Defaults of the counted runs. A run's time is mostly the server's
// start and stop under valgrind, not its statements, and what spreads the
// rounds is the memory layout each counts at, which more statements do not
// average: more rounds of fewer statements give a narrower interval in
// about the same time (bench/instructions, "More rounds of fewer
// statements").
const (
	defaultCountStatements = 100
	defaultCountWarmup     = 20
	defaultCountRounds     = 8
	// defaultCountWidth is the half-width, in points, a counted change
	// aims at: about what the layout's spread leaves a light statement's
	// observers at 8 rounds, which a few more rounds bring the wider
	// ones (an observer's own comparisons moved by the layout) to.
	defaultCountWidth = 0.05
)

// DefaultTwinShare is the share of the machine's CPUs each duet twin's
// server is held to unless --twin-cpus says otherwise. Its load runs
// apart, outside the quota, and takes up to half as much again, so a
// twin in all stays near a third of the machine: the twins never compete
// for a core with each other or with what runs beside them (obsbench
// itself, the machine's noise). At half the machine each, every
// disturbance took CPU from one twin and not the other, and A/A phases
// spread much wider (bench/duet/README.md).
const DefaultTwinShare = 0.25

// TwinQuota is each duet twin's CPU quota, in CPUs, on a machine of
// ncpu: --twin-cpus, else DefaultTwinShare of them.
func (s Spec) TwinQuota(ncpu int) float64 {
	if s.TwinCPUs > 0 {
		return s.TwinCPUs
	}
	return DefaultTwinShare * float64(ncpu)
}

// Default is the spec of 'obsbench run' with no flags: the default
// experiment on a managed PostgreSQL.
func Default() Spec {
	return Spec{
		Engine: "postgres", Standby: StandbyNone, Workload: "credit-top1",
		Replay: Replay{Mode: "stress", Speed: 1},
		// Method "" is chosen by the run: duet where it can run, else
		// auto (app.chooseMethod).
		Method: "", Rounds: defaultRounds, Duration: defaultDuration, Warmup: defaultWarmup,
		Alternation: Alternation{Duration: defaultAltDuration, PhaseMin: 2, PhaseMax: 4, Reps: 1},
		Count: Count{Statements: defaultCountStatements, Warmup: defaultCountWarmup,
			After: true, Rounds: defaultCountRounds, Sessions: 1, Width: defaultCountWidth},
		// DriverThreads is set again for the run's sessions unless given.
		MaxTime: 30 * time.Minute, DriverThreads: driver.DefaultProcs(16),
		// Waits stays 0 (off) in a plain run: sampling every 10 ms
		// costs more throughput than a default collector may
		// (bench/collectors/README.md). Studies that read waits switch
		// it on.
		Counters: true, KernelWaits: true, OnFailure: OnFailureContinue, Format: FormatText,
	}
}

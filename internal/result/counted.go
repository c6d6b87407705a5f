package result

// Counted is what an experiment counted rather than timed: each
// condition's user-space instructions per statement, with the server run
// under valgrind, one session at a time (package counting). It sits
// beside the timed figures of the same observers in a summary, and is
// the whole of a counted experiment's instructions.json.
type Counted struct {
	// Statements are counted per run, after Warmup of them.
	Statements int `json:"statements_per_run"`
	Warmup     int `json:"warmup_statements"`
	Rounds     int `json:"rounds"`
	// Width, if above 0, is the half-width in points the changes aimed
	// at: a condition wider after Rounds rounds was counted more rounds
	// (its Runs), and its interval is then a two-stage one.
	Width float64 `json:"width,omitempty"`
	// Sessions ran at once in each counted phase (0: one).
	Sessions int `json:"sessions_at_once,omitempty"`
	// Threads says the server's sessions are threads of one process
	// (MariaDB): the session's figure is what served client commands.
	Threads bool `json:"threads,omitempty"`
	// Scope says what the count holds and what it does not see.
	Scope      string             `json:"scope,omitempty"`
	Conditions []CountedCondition `json:"conditions,omitempty"`
	// Missing is why nothing was counted (no valgrind, an external
	// server); Error why the counting stopped partway.
	Missing string `json:"missing,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Condition is the counted condition named name, nil if none.
func (c *Counted) Condition(name string) *CountedCondition {
	if c == nil {
		return nil
	}
	for i := range c.Conditions {
		if c.Conditions[i].Name == name {
			return &c.Conditions[i]
		}
	}
	return nil
}

// CountedCondition is one condition's counts over its runs.
type CountedCondition struct {
	Name string `json:"name"`
	Runs int    `json:"runs"`
	// Backend (per statement) and Helpers (per run) are means over the
	// runs: the session's instructions, and the server's other
	// processes' (or threads') over the run's server.
	Backend float64 `json:"backend_instructions_per_stmt"`
	Helpers float64 `json:"helper_instructions_per_run"`
	// BackendSpreadPct is the largest run's backend count above the
	// smallest, in percent of the mean: how well runs repeat.
	BackendSpreadPct float64 `json:"backend_spread_pct"`
	// BackendChange and HelperChange are the change against the
	// baseline, paired by round; nil for the baseline.
	BackendChange *CountChange `json:"backend_change,omitempty"`
	HelperChange  *CountChange `json:"helper_change,omitempty"`
	// Syscalls and HelperSyscalls are means per statement; -1 unknown.
	Syscalls       float64 `json:"backend_syscalls_per_stmt"`
	HelperSyscalls float64 `json:"helper_syscalls_per_stmt"`
	Seconds        float64 `json:"seconds_per_run"`
	// Queries are the workload's queries counted apart (--count-per-query).
	Queries []CountedQuery `json:"queries,omitempty"`
}

// CountedQuery is one query of a workload counted apart: the session's
// instructions per execution, from an execution's start to the next
// statement's, mean over the runs, and the change against the
// baseline's, paired by round (nil for the baseline).
type CountedQuery struct {
	Name       string       `json:"name"`
	Executions int          `json:"executions_per_run"`
	PerExec    float64      `json:"instructions_per_execution"`
	Change     *CountChange `json:"change,omitempty"`
}

// CountChange is a change in percent with its confidence interval.
type CountChange struct {
	Pct    float64 `json:"pct"`
	Low    float64 `json:"ci_low"`
	High   float64 `json:"ci_high"`
	HasCI  bool    `json:"has_ci"` // two rounds or more
	Pairs  int     `json:"pairs"`
	Signif bool    `json:"significant"`
}

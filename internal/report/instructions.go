package report

import (
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/result"
)

// CountScope is what a counted experiment counts and what it does not,
// said under its table and recorded in instructions.json: on a server
// whose sessions are processes (PostgreSQL) or threads of one process
// (MariaDB), its phases one session each or sessions of them at once.
func CountScope(threads bool, sessions int) string {
	return countScope(threads, sessions) + ". " + onceASecond
}

func countScope(threads bool, sessions int) string {
	at, the, phase, ran := "one session at a time", "the session's", "session", "the session ran"
	contention := "and contention between sessions"
	if sessions > 1 {
		at, the, phase, ran = fmt.Sprintf("%d sessions at once in each phase, summed", sessions), "the sessions'", "phase", "the sessions ran"
		contention = "and contention between the sessions but for the instructions it costs (a spin, a retry), which a loaded machine grows: sessions at once are not a count the machine's load leaves alone; the time they wait on each other is not counted"
	}
	if threads {
		return "user-space instructions of the server process, counted by valgrind (callgrind), " + at + ": " +
			the + " figure is what ran inside do_command (serving a client command) on any thread, less reading the command from the socket (a matter of timing: a read that finds no bytes yet waits and reads again); " +
			"the server counts one lifetime per run, split at each connection's end: a warm " + phase + ", then the control and the measured ones, whose difference is the statements'; " +
			"other threads' is the rest of that lifetime, start-up, the sessions' connection set-up and shutdown included; system calls are the whole process's while " + ran + ". " +
			"Not counted: the kernel, time spent waiting (I/O, locks, a slow log device, a replica) " + contention + ". " +
			"An observer whose cost is there can count +0% and cost much time: measure it with --method rounds too. " +
			"Under the counter the server runs with innodb_use_native_aio=0 (valgrind has no asynchronous I/O): its background I/O differs, not a statement's work; " +
			"and with a cold buffer pool (none loaded at start-up), innodb_old_blocks_time=0, no thread cache and one table cache instance, so that no timing decides a session's path. " +
			"Each round's server begins its main thread's stack at a place of its own (up to a page lower), the same for each of the round's conditions; the sessions' threads have stacks of their own, which this does not move"
	}
	return "user-space instructions of the server's processes, counted by valgrind (cachegrind, no cache simulation; callgrind, split at each statement, where queries are counted apart), " + at + "; " +
		"not counted: the kernel (the system calls shown, fsync, pipe and socket work), time spent waiting (I/O, locks, a slow log device, a synchronous standby) " +
		contention + ". An observer whose cost is there can count +0% and cost much time: measure it with --method rounds too. " +
		"Other processes (postmaster, logging collector, WAL writer, checkpointer...) count when they exit: their figure is the run's server's whole life, start-up and shutdown included. " +
		"Under the counter the server plans no parallel query and runs no autovacuum (max_parallel_workers_per_gather=0, autovacuum=off), so that no timing splits a query's work between its backend and workers or sends a session invalidations. " + layout
}

// layout is what the scope of a server of processes says about where
// memory lies.
const layout = "Each round's servers begin their stack at a place of their own (up to a page lower), the same for each of the round's conditions: where strings lie moves what a comparison of them counts, and the intervals hold what it does to an observer's change"

// onceASecond is what both scopes say about work done per interval of
// time rather than per statement.
const onceASecond = "Work done once per interval of time (a log's timestamp when the second changes, statistics flushed once a second) weighs more in the count than in use: under the counter a statement takes tens of times longer"

// InstructionsHead is what a counted experiment ran.
type InstructionsHead struct {
	Server, Workload           string
	Statements, Warmup, Rounds int
	// Width is the half-width the changes aimed at (--count-width).
	Width float64
	// Sessions ran at once in each phase (0 or 1: one).
	Sessions int
	// Threads says the server's sessions are threads of one process,
	// counted as CountScope says.
	Threads bool
}

// Instructions prints a counted experiment's table: per condition, the
// backend's instructions per statement and their change against the
// baseline, the other processes' (per run: start to shutdown), the spread
// of repeated runs, and the system calls that the count does not see.
func Instructions(w io.Writer, h InstructionsHead, conds []result.CountedCondition) {
	notef(w, "instructions per statement: %s on %s, %d statements counted after %d %s, %s, intervals 95%% paired by round",
		h.Workload, h.Server, h.Statements, h.Warmup, perSession(h.Sessions), runsEach(h.Rounds, h.Width, conds, "per condition"))
	fmt.Fprintln(w)
	scope, who, others, sys := CountScope(h.Threads, h.Sessions), "backend", otherProcesses(h.Threads), "backend"
	if h.Threads {
		who, sys = "session", "process"
	}
	t := columns{head: []string{"condition", who + " instr/stmt", "change % [95% CI]", "runs' spread", others + " instr/run", others + " change % [CI]",
		sys + " syscalls/stmt", "other syscalls/stmt", "s/run"}, left: []bool{true}}
	var kernel []string
	for i, c := range conds {
		t.add(c.Name, thousands(c.Backend), changeText(c.BackendChange), fmt.Sprintf("%.3f%%", c.BackendSpreadPct), thousands(c.Helpers),
			changeText(c.HelperChange), syscallText(c.Syscalls), syscallText(c.HelperSyscalls), fmt.Sprintf("%.0f", c.Seconds))
		if i > 0 && conds[0].Syscalls >= 0 && c.Syscalls >= 0 && c.Syscalls-conds[0].Syscalls >= 0.05 {
			kernel = append(kernel, fmt.Sprintf("%s makes %.2f more system calls per statement than the baseline", c.Name, c.Syscalls-conds[0].Syscalls))
		}
		if i > 0 && conds[0].HelperSyscalls >= 0 && c.HelperSyscalls >= 0 && c.HelperSyscalls-conds[0].HelperSyscalls >= 0.05 {
			kernel = append(kernel, fmt.Sprintf("%s makes the other processes do %.2f more system calls per statement", c.Name, c.HelperSyscalls-conds[0].HelperSyscalls))
		}
	}
	t.writeFitted(w, 1)
	queryCounts(w, conds)
	fmt.Fprintln(w)
	notef(w, "scope: %s.", scope)
	for _, k := range kernel {
		notef(w, "not counted: %s: the kernel's work for them is outside the count.", k)
	}
}

// perSession says where a run's statements ran: "per run" in one
// session, else in each of its sessions at once.
func perSession(sessions int) string {
	if sessions > 1 {
		return fmt.Sprintf("in each of %d sessions at once per run", sessions)
	}
	return "per run"
}

// changeText is a counted change with its interval, its bounds signed as
// the table's other changes are.
func changeText(c *result.CountChange) string { return countChangeText(c, "[%+.2f, %+.2f]") }

func syscallText(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

// otherProcesses names what a count holds besides the sessions: the
// server's other processes, or its other threads where sessions are
// threads (MariaDB).
func otherProcesses(threads bool) string {
	if threads {
		return "other threads"
	}
	return "other processes"
}

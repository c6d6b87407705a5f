// Package study defines obsbench's built-in studies: the published manual
// studies the project grew from (../shared/studies.md), each as an
// experiment with fixed workload, observers and method, and the mapping from
// the study's original set-ups to the engine's analogues.
package study

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/result"
)

// Study is one built-in study for one engine.
type Study struct {
	Name     string
	Engine   string
	Title    string
	Question string
	Workload string
	// Workloads, when set, are run one experiment each, in order, with
	// the same conditions (study 4: autocommit, then batched).
	Workloads []string
	Clients   int
	// Standby is the managed standby the study's primary has (none,
	// async, sync).
	Standby string
	// Audit, for study 5, is the audit observer whose trail is checked
	// for completeness and whose overhead is swept over session counts;
	// Sessions are the counts.
	Audit    string
	Sessions []int
	// Commit names, for study 4's table, the engine's counters and wait
	// of the commit path.
	Commit CommitKeys
	// Method is the experiment's --method.
	Method string
	// Rounds and Duration, if set, are its --rounds and --duration.
	Rounds   int
	Duration time.Duration
	// Params are the workload's own parameters, by flag name (study 3's
	// --blocks).
	Params map[string]int
	// Waits is the wait sampler's interval, 0 for off (the study reads
	// waits).
	Waits time.Duration
	// Rows are the set-ups in table order, the baseline first.
	Rows []Row
	// Unmapped are set-ups of the original study with no analogue on this
	// engine, and why.
	Unmapped []string
	// Matrix, for study 3, places each observer in the condensed table:
	// its target (row) and variant (column). Rows are made from it.
	Matrix []Cell
	// Variants, if set, are the matrix's columns; default: Variants.
	Variants []string
	// Replay, for study 2, says the study replays a capture: made by
	// running Workload with capture on, unless the user gives --capture.
	Replay bool
}

// aaTarget is study 3's A/A row: the baseline run again as if it were an
// observer. Its interval is what the study's other intervals are worth:
// it should contain 0, and its width is the least difference the study
// can tell.
const aaTarget = "nothing (A/A: the baseline again)"

// duetAA is a duet's own A/A arm: nothing in either twin. A study by duet
// places it in its A/A cell rather than running the baseline a second
// time as baseline-again, which would only repeat it.
const duetAA = result.AAName

// Cell is one observer of study 3's matrix.
type Cell struct {
	Target, Variant, Observer string
}

// Variants are the columns of study 3's table, in order.
var Variants = []string{VariantAsIs, VariantLossy, VariantMoreFields, VariantFilteredOut}

// The variants of a target.
const (
	VariantAsIs        = "as is"
	VariantLossy       = "lossy"
	VariantMoreFields  = "more fields"
	VariantFilteredOut = "filtered out"
	// SQL Server's retention modes and causality tracking (study 3's own
	// variants): as is is ALLOW_SINGLE_EVENT_LOSS, lossy
	// ALLOW_MULTIPLE_EVENT_LOSS.
	VariantNoLoss    = "no event loss"
	VariantCausality = "causality"
)

// Columns are the variants of s's matrix, in table order.
func (s Study) Columns() []string {
	if len(s.Variants) > 0 {
		return s.Variants
	}
	return Variants
}

// matrixRows are the rows of a matrix study: the baseline, then each cell.
func matrixRows(cells []Cell) []Row {
	rows := []Row{{"baseline", "no observer"}}
	for _, c := range cells {
		rows = append(rows, Row{c.Observer, c.Target + ", " + c.Variant})
	}
	return rows
}

// CommitKeys are the names under which an engine's counters (per second,
// or levels) and waits hold what study 4 reads.
type CommitKeys struct {
	Commits, Flushes, LogBytes string // counters
	Lag, LagLabel, LagNote     string // a level, in ms, and what it is
	Wait                       string // the wait for the replica
}

// Row is one set-up: an observer and the original set-up it stands for.
type Row struct {
	Observer string
	Original string
}

// Observers lists the rows' observers, without the baseline.
func (s Study) Observers() []string {
	var out []string
	for _, r := range s.Rows {
		if r.Observer != "baseline" && r.Observer != duetAA {
			out = append(out, r.Observer)
		}
	}
	return out
}

var studies = map[string]Study{
	"wait-signatures/postgres": {
		Name: "wait-signatures", Engine: "postgres",
		Title:    "Do wait statistics reveal an observer?",
		Question: "Actual-plan capture sent to the analogues of study 1's seven sinks: how much does each slow the server, and does any wait show it?",
		Workload: "credit-top1", Clients: 16, Method: "rounds", Waits: 10 * time.Millisecond,
		Rows: []Row{
			{"baseline", "baseline"},
			{"plans-stream", "Profiler: live stream of plan events to a client"},
			{"plans-stream-slow", "the same client, slow to read (nothing lost)"},
			{"auto-explain-analyze", "server-side trace to a file; event session to event_file"},
			{"plans-file-slow", "trace / event file on a slow I/O path with no event loss"},
			{"plans-stream-lossy", "event file on a slow path, events dropped (allow event loss)"},
		},
		Unmapped: []string{
			"event session to an in-memory ring buffer: PostgreSQL has no in-memory sink for plans (pg_wait_sampling's ring holds wait samples, not events)",
		},
	},
	"wait-signatures/mariadb": {
		Name: "wait-signatures", Engine: "mariadb",
		Title:    "Do wait statistics reveal an observer?",
		Question: "Actual-plan capture (the slow log with EXPLAIN) and the in-memory ring, as the analogues of study 1's sinks: how much does each slow the server, and does any wait show it?",
		Workload: "credit-top1", Clients: 16, Method: "rounds", Waits: 10 * time.Millisecond,
		Rows: []Row{
			{"baseline", "baseline"},
			{"plans-slow-log", "server-side trace to a file; event session to event_file"},
			{"plans-slow-log-slow", "trace / event file on a slow I/O path with no event loss"},
			{"perf-schema-statements-history", "event session to an in-memory ring buffer (statement events, no plans)"},
			{"general-log-file-slow", "statement trace (no plans) to a file on a slow I/O path"},
		},
		Unmapped: []string{
			"Profiler live stream to a client, fast and slow: MariaDB has no push stream of events to a client (a client can only poll performance_schema or read mysql.general_log)",
			"event file on a slow path with events dropped: MariaDB's logs and server_audit files block the session on a slow device and never drop; server_audit to syslog drops without counting",
		},
	},
}

func init() {
	durability := []Row{
		{"baseline", "synchronous replica: commit waits until the replica has hardened the log (synchronous_commit=on)"},
		{"sync-commit-remote-write", "commit waits until the replica has received the log, not hardened it"},
		{"sync-commit-remote-apply", "commit waits until the replica has replayed the transaction"},
		{"sync-commit-local", "replica asynchronous: commit waits for the local log flush only"},
		{"sync-commit-off", "delayed durability: commit does not wait for any flush"},
	}
	studies["sync-commit/postgres"] = Study{
		Name: "sync-commit", Engine: "postgres",
		Title:    "What does a synchronous replica cost a commit, and what does batching save?",
		Question: "10,000-row inserts, one transaction each and in explicit transactions, with a synchronous standby and each durability setting: time per 10,000 inserts, commits and WAL flushes per second, and the share of time spent waiting for the standby (IPC:SyncRep).",
		Workload: "inserts-autocommit", Workloads: []string{"inserts-autocommit", "inserts-batched"},
		// 8 rounds: the least at which rounds pair runs for 4 comparisons.
		Clients: 1, Method: "rounds", Rounds: 8, Duration: 5 * time.Second, Waits: 10 * time.Millisecond, Standby: "sync",
		Rows: durability,
		Commit: CommitKeys{Commits: "xact_commit", Flushes: "wal_sync", LogBytes: "wal_bytes",
			Lag: "replica_flush_lag_ms", LagLabel: "flush lag ms", LagNote: "the primary's last measure of the standby's flush lag, at the end of the run; commits/s counts every transaction in the database, obsbench's own sampling and counter queries included", Wait: "IPC:SyncRep"},
	}
	studies["sync-commit/mariadb"] = Study{
		Name: "sync-commit", Engine: "mariadb",
		Title:    "What does a synchronous replica cost a commit, and what does batching save?",
		Question: "10,000-row inserts, one transaction each and in explicit transactions, with a semi-synchronous replica and each durability setting: time per 10,000 inserts, commits and redo log flushes per second, and the share of time spent waiting for the replica's acknowledgement.",
		Workload: "inserts-autocommit", Workloads: []string{"inserts-autocommit", "inserts-batched"},
		Clients: 1, Method: "rounds", Rounds: 8, Duration: 5 * time.Second, Waits: 10 * time.Millisecond, Standby: "sync",
		Rows: []Row{
			{"baseline", "synchronous replica (semi-sync: commit waits until the replica has received the log), redo log flushed at commit"},
			{"semi-sync-off", "replica asynchronous: commit waits for the local log flush only"},
			{"sync-binlog-1", "the binary log hardened at commit as well (a second log flush)"},
			{"flush-log-at-commit-2", "delayed durability: redo log written at commit, flushed once a second"},
			{"flush-log-at-commit-0", "delayed durability: redo log written and flushed once a second"},
		},
		Commit: CommitKeys{Commits: "binlog_commits", Flushes: "innodb_data_fsyncs", LogBytes: "innodb_os_log_written",
			Lag: "semi_sync_wait_ms", LagLabel: "ack wait ms", LagNote: "the mean wait for the replica's acknowledgement since the server started (before the run)", Wait: "State:Waiting for semi-sync ACK from slave"},
		Unmapped: []string{
			"the replica hardening the log before the commit returns: MariaDB's semi-synchronous replication waits until the replica has received (not flushed) the events",
		},
	}
	studies["audit/postgres"] = Study{
		Name: "audit", Engine: "postgres",
		Title:    "Is the audit trail complete, and is it cheap?",
		Question: "pgaudit on every read and write to rotated 10 MB files: do the files hold one record per statement executed, how much do they grow, and what does auditing cost the two thousand-queries at 1 to 32 sessions?",
		Workload: "thousand-point", Workloads: []string{"thousand-point", "thousand-range"},
		Clients: 4, Method: "alternation", Waits: 0, Audit: "pgaudit-rotated", Sessions: []int{1, 2, 4, 8, 16, 32},
		Rows: []Row{
			{"baseline", "audit event session stopped"},
			{"pgaudit-rotated", "event session on statement completion with 13 fields, 10 MB rollover files, no event loss"},
		},
		Unmapped: []string{
			"500 rollover files kept at most: PostgreSQL never deletes a log file it rotated away from (only time-based rotation with log_truncate_on_rotation reuses names); obsbench's managed server removes its files when it stops",
			"query hash, plan hash and T-SQL stack of each record: pgaudit records the statement, its class and object; pg_stat_statements has the query id",
		},
	}
	studies["audit/mariadb"] = Study{
		Name: "audit", Engine: "mariadb",
		Title:    "Is the audit trail complete, and is it cheap?",
		Question: "server_audit on every statement to rotated 10 MB files: do the files hold one record per statement executed, how much do they grow, and what does auditing cost the two thousand-queries at 1 to 32 sessions?",
		Workload: "thousand-point", Workloads: []string{"thousand-point", "thousand-range"},
		Clients: 4, Method: "alternation", Waits: 0, Audit: "server-audit-rotated", Sessions: []int{1, 2, 4, 8, 16, 32},
		Rows: []Row{
			{"baseline", "audit event session stopped"},
			{"server-audit-rotated", "event session on statement completion, 10 MB rollover files (500 kept), no event loss"},
		},
		Unmapped: []string{
			"query hash, plan hash and T-SQL stack of each record: server_audit records time, host, user, client, connection and query ids, database and the statement",
		},
	}
}

func init() {
	pgTargets := []Cell{
		{aaTarget, VariantAsIs, duetAA},
		{"statement log, file", VariantAsIs, "log-statements-file"},
		{"statement log, file", VariantMoreFields, "log-statements-prefix"},
		{"statement log, file", VariantFilteredOut, "log-filtered-out"},
		{"statement log, live stream", VariantAsIs, "log-statements-stream"},
		{"statement log, live stream", VariantLossy, "log-statements-stream-lossy"},
		{"statement log, no consumer", VariantAsIs, "log-statements-syslog"},
		{"statistics per statement", VariantAsIs, "pg-stat-statements"},
		{"statistics per statement", VariantMoreFields, "pg-stat-statements-planning"},
		{"actual plans", VariantAsIs, "auto-explain-analyze"},
		{"actual plans", VariantLossy, "plans-stream-lossy"},
		{"actual plans", VariantMoreFields, "auto-explain-verbose"},
		{"actual plans", VariantFilteredOut, "auto-explain-filtered-out"},
		{"audit, file", VariantAsIs, "pgaudit-read"},
		{"audit, file", VariantLossy, "pgaudit-stream-lossy"},
		{"audit, file", VariantMoreFields, "pgaudit-read-params"},
		{"audit, file", VariantFilteredOut, "pgaudit-filtered-out"},
		{"lock waits", VariantFilteredOut, "log-lock-waits"},
		{"wait samples, in-memory ring", VariantAsIs, "pg-wait-sampling"},
	}
	studies["targets/postgres"] = Study{
		Name: "targets", Engine: "postgres",
		Title:    "What does each kind of target cost under CPU load, and what does a filter that matches nothing save?",
		Question: "A read-only decision-support mix (dss-mix) keeps the CPU busy; each observer records its events to a different target, lossless or lossy, with more fields per event, or filtered so that it records nothing.",
		// A duet: the observer's twin against its twin in the same
		// seconds, where rounds of restarted servers felt the machine's
		// drift in full (docs/targets.md compares them). 20 phases: 10
		// pairs, the least at which a signed-rank interval over the
		// study's 19 comparisons (Bonferroni) has any confidence. Fixed
		// work, as the original replayed its workload: one block of
		// dss-mix per session, a phase ending when both twins are done; in
		// a timed run the count of statements depends on how many reports
		// fell in the window. 2 sessions a twin keep its CPU share
		// saturated, as 8 sessions did 2 cores.
		Workload: "dss-mix", Clients: 2, Method: "duet", Waits: 0,
		Rounds: 20, Params: map[string]int{"blocks": 1},
		Matrix: pgTargets, Rows: matrixRows(pgTargets),
		Unmapped: []string{
			"lock acquired/released events: PostgreSQL traces locks only when built with LOCK_DEBUG (trace_locks), which Debian's build is not; log_lock_waits records waits longer than deadlock_timeout, which a read-only mix never has",
			"ring buffer, histogram and pair-matching targets of the same events: PostgreSQL keeps no in-memory buffer of statement events; pg_stat_statements aggregates per statement (a histogram by query), pg_wait_sampling keeps a ring of wait samples",
			"causality tracking and multiple-event loss: no PostgreSQL sink has them; the lossy variant is the live stream whose pipe drops a record when full",
			"Profiler on a remote machine: the live stream's reader is obsbench on the same machine",
		},
	}
	mariaTargets := []Cell{
		{aaTarget, VariantAsIs, duetAA},
		{"statement log, file", VariantAsIs, "general-log-file"},
		{"statement log, file", VariantMoreFields, "slow-log-all"},
		{"statement log, file", VariantFilteredOut, "slow-log-filtered-out"},
		{"statement log, table", VariantAsIs, "general-log-table"},
		{"statement events, no consumer", VariantAsIs, "perf-schema-no-consumer"},
		{"statistics per statement", VariantAsIs, "perf-schema"},
		{"statistics per statement", VariantFilteredOut, "perf-schema-filtered-out"},
		{"statement events, in-memory ring", VariantAsIs, "perf-schema-statements-history"},
		{"statement events, in-memory ring", VariantMoreFields, "perf-schema-waits"},
		{"actual plans", VariantAsIs, "plans-slow-log"},
		{"actual plans", VariantFilteredOut, "plans-slow-log-filtered-out"},
		{"audit, file", VariantAsIs, "server-audit-file"},
		{"audit, file", VariantLossy, "server-audit-syslog"},
		{"audit, file", VariantMoreFields, "server-audit-table-events"},
		{"audit, file", VariantFilteredOut, "server-audit-filtered"},
	}
	studies["targets/mariadb"] = Study{
		Name: "targets", Engine: "mariadb",
		Title:    studies["targets/postgres"].Title,
		Question: studies["targets/postgres"].Question,
		Workload: "dss-mix", Clients: 2, Method: "duet", Waits: 0,
		Rounds: 20, Params: map[string]int{"blocks": 1}, // as targets/postgres
		Matrix: mariaTargets, Rows: matrixRows(mariaTargets),
		Unmapped: []string{
			"lock acquired/released events: performance_schema times metadata-lock and mutex waits (perf-schema-waits), not each lock taken and released",
			"pair-matching target and causality tracking: MariaDB has neither",
			"lossy variants of the file targets: MariaDB's logs block a session on a slow device and never drop; only server_audit to syslog drops (uncounted)",
		},
	}
	studies["replay/postgres"] = Study{
		Name: "replay", Engine: "postgres",
		Title:    "What does each observer cost a replayed workload, and does its cost change over time?",
		Question: "A captured decision-support workload replayed as fast as the server answers (stress mode, each session's order kept), once per run: total replay time, % degradation, statements/s, and the per-second series, with the transients it shows.",
		Workload: "dss-mix", Clients: 8, Method: "rounds", Waits: 0, Replay: true,
		// 8 rounds: the least at which a signed-rank interval over 6
		// comparisons (Bonferroni) has any confidence.
		Rounds: 8,
		Rows: []Row{
			{"baseline", "baseline"},
			{"log-statements-file", "server-side trace to a file; event session to event_file"},
			{"log-statements-stream", "Profiler on the server; event stream to a live client"},
			{"log-statements-stream-lossy", "event stream whose reader falls behind (records dropped, not waited for)"},
			{"auto-explain-analyze", "actual-plan capture to a file"},
			{"pg-stat-statements", "event session to ring_buffer: in-memory statistics per statement"},
			{"pg-wait-sampling", "in-memory wait sampling (every 10 ms)"},
		},
		Unmapped: []string{
			"Profiler on a remote machine: the live stream's reader runs on the server's machine (obsbench reads the server's stderr pipe); a reader in another network namespace is not built",
			"the server disconnecting a lagging live reader (XE event_stream): PostgreSQL's log pipe never disconnects its reader; it blocks (log-statements-stream) or drops records (-lossy)",
			"logins and logouts replayed: stress mode keeps one connection per captured session",
		},
	}

	studies["replay/mariadb"] = Study{
		Name: "replay", Engine: "mariadb",
		Title:    studies["replay/postgres"].Title,
		Question: studies["replay/postgres"].Question,
		Workload: "dss-mix", Clients: 8, Method: "rounds", Waits: 0, Replay: true, Rounds: 8,
		Rows: []Row{
			{"baseline", "baseline"},
			{"general-log-file", "server-side trace to a file; event session to event_file"},
			{"general-log-table", "trace to a table"},
			{"plans-slow-log", "actual-plan capture to a file"},
			{"perf-schema", "in-memory statistics per statement (digests)"},
			{"perf-schema-statements-history", "event session to ring_buffer: the statement history ring"},
			{"server-audit-syslog", "a stream whose records are dropped when nobody reads them"},
		},
		Unmapped: []string{
			"Profiler and the live event stream, local and remote: MariaDB has no push stream of events to a client",
			"logins and logouts replayed: stress mode keeps one connection per captured session",
			"performance_schema's counts of a replay: the replay sends the general log's text statements (COM_QUERY), which it counts under statement/sql/*, not the prepared executions it counts for other workloads; its events show as not matching",
		},
	}
}

// Lookup finds engine's study by name (in the order of the observer
// catalog's Lookup).
func Lookup(engine, name string) (Study, error) {
	if s, ok := studies[name+"/"+engine]; ok {
		return s, nil
	}
	return Study{}, fmt.Errorf("no study %q for %s; built-in studies: %s", name, engine, strings.Join(Names(engine), ", "))
}

// Names lists the studies for engine.
func Names(engine string) []string {
	var out []string
	for _, s := range studies {
		if s.Engine == engine {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}

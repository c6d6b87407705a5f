package study

import "time"

// The studies on SQL Server, the engine they were first done on: the
// original set-ups themselves (Extended Events sessions, SQL Traces, an
// availability group), not analogues. Observers are in
// internal/observer/catalog/sqlserver.yaml.

func init() {
	studies["wait-signatures/sqlserver"] = Study{
		Name: "wait-signatures", Engine: "sqlserver",
		Title:    studies["wait-signatures/postgres"].Title,
		Question: "Actual-plan capture (query_post_execution_showplan, Showplan XML Statistics Profile) to each of study 1's server-side sinks: how much does each slow the server, and does any wait show it (diffed from sys.dm_os_wait_stats, never cleared)?",
		Workload: "credit-top1", Clients: 16, Method: "rounds", Waits: 10 * time.Millisecond,
		Rows: []Row{
			{"baseline", "baseline"},
			{"trace-plans-file", "server-side trace to a file"},
			{"xe-plans-ring-buffer", "event session to an in-memory ring buffer (max 1000 events)"},
			{"xe-plans-file", "event session to a file"},
			{"xe-plans-file-no-loss", "event file with NO event loss"},
		},
		Unmapped: []string{
			"Profiler (a rowset trace streamed to a client): not creatable from T-SQL; run Profiler against the server yourself and measure it as the baseline's condition",
			"trace and event file on a slow I/O path: obsbench cannot slow another machine's disk; point the server's log directory at a slow device to measure it",
		},
	}

	var targets []Cell
	for _, t := range []struct{ label, name string }{
		{"no target", "no-target"}, {"ring buffer", "ring-buffer"}, {"event file", "file"},
		{"event counter", "counter"}, {"histogram (lock mode)", "histogram"}, {"pair matching", "pair-matching"},
	} {
		base := "xe-locks-" + t.name
		targets = append(targets,
			Cell{t.label, VariantAsIs, base},
			Cell{t.label, VariantNoLoss, base + "-no-loss"},
			Cell{t.label, VariantLossy, base + "-multiple-loss"},
			Cell{t.label, VariantCausality, base + "-causality"},
			Cell{t.label, VariantFilteredOut, base + "-filtered-out"})
	}
	targets = append(targets,
		Cell{"SQL Trace to file", VariantAsIs, "trace-locks-file"},
		Cell{"SQL Trace to file", VariantFilteredOut, "trace-locks-file-filtered-out"})
	studies["targets/sqlserver"] = Study{
		Name: "targets", Engine: "sqlserver",
		Title:    studies["targets/postgres"].Title,
		Question: "lock_acquired and lock_released with their fields to each XE target, in each retention mode and with causality tracking, and the same with a predicate that never matches; and a SQL Trace of the same events: overhead of each under a CPU-saturating workload.",
		Workload: "credit-top1", Clients: 16, Method: "rounds", Waits: 0,
		Rounds: 10, Duration: 5 * time.Second,
		Matrix: targets, Rows: matrixRows(targets),
		Variants: []string{VariantAsIs, VariantNoLoss, VariantLossy, VariantCausality, VariantFilteredOut},
		Unmapped: []string{
			"the decision-support mix: dss-mix is not written in T-SQL yet (stored functions, EXTRACT, GROUP BY ordinals); credit-top1 at 16 sessions keeps the CPU saturated instead",
			"trace with no consumer and Profiler on a remote machine: rowset traces are attached by a client and cannot be created from T-SQL",
		},
	}

	studies["sync-commit/sqlserver"] = Study{
		Name: "sync-commit", Engine: "sqlserver",
		Title:    studies["sync-commit/postgres"].Title,
		Question: "10,000-row inserts, one transaction each and in explicit transactions, on a database in an availability group whose secondaries commit synchronously and then asynchronously: time per 10,000 inserts, write transactions and log flushes per second, and the share of time spent in HADR_SYNC_COMMIT.",
		Workload: "inserts-autocommit", Workloads: []string{"inserts-autocommit", "inserts-batched"},
		Clients: 1, Method: "rounds", Rounds: 8, Duration: 5 * time.Second, Waits: 10 * time.Millisecond,
		Rows: []Row{
			{"baseline", "the availability group as it is"},
			{"ag-synchronous-commit", "synchronous replica: commit waits until the replica has hardened the log"},
			{"ag-asynchronous-commit", "replica asynchronous: commit waits for the local log flush only"},
		},
		Commit: CommitKeys{Commits: "db_write_transactions", Flushes: "db_log_flushes", LogBytes: "db_log_bytes_flushed", Wait: "HADR_SYNC_COMMIT"},
		Unmapped: []string{
			"creating the replica: obsbench never creates an availability group; the dataset's database (obsbench) must already be in one, with this server its primary",
		},
	}

	studies["audit/sqlserver"] = Study{
		Name: "audit", Engine: "sqlserver",
		Title:    studies["audit/postgres"].Title,
		Question: "An XE audit session on statement completion with 13 actions to 10 MB rollover files (500 kept), NO_EVENT_LOSS, 5 s dispatch latency: do the files hold one event per statement executed, and what does auditing cost the two thousand-queries at 1 to 32 sessions?",
		Workload: "thousand-point", Workloads: []string{"thousand-point", "thousand-range"},
		Clients: 4, Method: "auto", Waits: 0, Audit: "xe-audit-file", Sessions: []int{1, 2, 4, 8, 16, 32},
		Rows: []Row{
			{"baseline", "audit event session stopped"},
			{"xe-audit-file", "event session on statement completion with 13 fields, 10 MB rollover files, no event loss"},
		},
	}
}

// Package study defines obsbench's built-in studies: the published manual
// studies the project grew from (../shared/studies.md), each as an
// experiment with fixed workload, observers and method, and the mapping from
// the study's original set-ups to the engine's analogues.
package study

import (
	"fmt"
	"sort"
	"strings"
)

// Study is one built-in study for one engine.
type Study struct {
	Name     string
	Engine   string
	Title    string
	Question string
	Workload string
	Clients  int
	// Method is the experiment's --method.
	Method string
	// Waits is the wait sampler's interval (the study reads waits).
	Waits string
	// Rows are the set-ups in table order, the baseline first.
	Rows []Row
	// Unmapped are set-ups of the original study with no analogue on this
	// engine, and why.
	Unmapped []string
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
		if r.Observer != "baseline" {
			out = append(out, r.Observer)
		}
	}
	return out
}

var studies = map[string]Study{
	"wait-signatures/postgres": {
		Name: "wait-signatures", Engine: "postgres",
		Title:    "Study 1: do wait statistics reveal an observer?",
		Question: "Actual-plan capture sent to the analogues of study 1's seven sinks: how much does each slow the server, and does any wait show it?",
		Workload: "credit-top1", Clients: 16, Method: "rounds", Waits: "10ms",
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
		Title:    "Study 1: do wait statistics reveal an observer?",
		Question: "Actual-plan capture (the slow log with EXPLAIN) and the in-memory ring, as the analogues of study 1's sinks: how much does each slow the server, and does any wait show it?",
		Workload: "credit-top1", Clients: 16, Method: "rounds", Waits: "10ms",
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

// Lookup finds a study by name for engine.
func Lookup(name, engine string) (Study, error) {
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

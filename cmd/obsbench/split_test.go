package main

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// A split on a managed server: each phase's two groups of sessions are
// measured apart, the observer's session settings reach its group's
// sessions and no other (its log holds exactly that group's statements,
// and pg_stat_statements, held at track=none for the server, counts only
// that group's), and each group's backends' CPU per statement is read.
func TestSplitManaged(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	out := filepath.Join(tmp, "out")
	// Phases of 2 s after a second of warm-up: on a starved machine a
	// group once measured no statement in a 1-s window.
	stdout, _ := runOK(t, "run", "--method", "split", "--observers", "log-statements-file,pg-stat-statements", "--rounds", "4",
		"--duration", "2s", "--warmup", "1s", "--clients", "4", "--seed", "3", "--count=false", "--out", out)
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil || len(runs) != 12 {
		t.Fatalf("results.jsonl: %d runs, %v; want 4 phases of the A/A arm and of each observer", len(runs), err)
	}
	for _, r := range runs {
		d := r.Duet
		if r.Error != "" || r.Method != result.MethodSplit || d == nil {
			t.Fatalf("run %d (%s): method %s, error %q, groups %v", r.Seq, r.Condition, r.Method, r.Error, d)
		}
		if want := experiment.GroupNames[experiment.DuetOn(r.Round, experiment.DuetFlipped(3, r.Condition))]; d.On != want {
			t.Errorf("run %d, round %d: observer in group %s; want %s", r.Seq, r.Round, d.On, want)
		}
		if r.Driver.Clients != 2 || d.Off.Clients != 2 || r.Driver.Throughput <= 0 || d.Off.Throughput <= 0 {
			t.Errorf("run %d: groups of %d and %d sessions at %.0f and %.0f statements/s; want 2 sessions each, both measured",
				r.Seq, r.Driver.Clients, d.Off.Clients, r.Driver.Throughput, d.Off.Throughput)
		}
		if d.OnServerUS <= 0 || d.OffServerUS <= 0 || d.OnCPUs <= 0 || d.OffCPUs <= 0 || d.ShareCPUs != 0 {
			t.Errorf("run %d: groups' server CPU %.1f and %.1f µs per statement, %.2f and %.2f CPUs, share %.2f; want each group's backends read, no quota",
				r.Seq, d.OnServerUS, d.OffServerUS, d.OnCPUs, d.OffCPUs, d.ShareCPUs)
		}
		if r.Condition == experiment.AAName {
			continue
		}
		ev := r.Events
		if ev == nil || ev.Executed != r.Driver.Executed || ev.Recorded != ev.Executed || ev.Executed == 0 {
			t.Errorf("run %d (%s): events %+v, the observer's group executed %d, the other %d; want exactly the observer's group's statements recorded",
				r.Seq, r.Condition, ev, r.Driver.Executed, d.Off.Executed)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := result.ValidateSummary(b); err != nil {
		t.Errorf("summary.json: %v", err)
	}
	var s result.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Conditions {
		if c.Name == "log-statements-file" && (c.Measures != result.MeasuresPerSession || !strings.HasPrefix(c.Method, "split: 4 phases") || c.Overhead == nil || c.ServerCost == nil) {
			t.Errorf("%s: measures %q, method %q, overhead %+v, cost %+v; want its per-session cost by split", c.Name, c.Measures, c.Method, c.Overhead, c.ServerCost)
		}
	}
	if want := "split of two session groups on one server, 4 phases x 2s"; !printed(stdout, want) {
		t.Errorf("report lacks %q:\n%s", want, stdout)
	}
	// Every row's measure said in a sentence, or in a column defined
	// under the table where the rows differ.
	if !printed(stdout, "Every observer's row is the cost the observer puts on the sessions it is set in") &&
		!(printed(stdout, "per-session, runs") && printed(stdout, "per-session = what the observer costs the sessions it is set in")) {
		t.Errorf("report does not say the rows measure the per-session cost:\n%s", stdout)
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("journals left: %v", left)
	}
}

// split,duet: a duet of managed twins and, beside it, a split of each
// observer on the first twin at its CPU share: both rows of an observer
// come from the same server, and the whole less the per-session is the
// shared part, in summary.json (valid by its schema) and under the table.
func TestSplitDuetManaged(t *testing.T) {
	needServers(t)
	asWorkers(t)
	tmp, state := privateState(t)
	out := filepath.Join(tmp, "out")
	stdout, _ := runOK(t, "run", "--method", "split,duet", "--observers", "log-statements-file", "--rounds", "4",
		"--duration", "1s", "--warmup", "500ms", "--clients", "4", "--seed", "3", "--count=false", "--out", out)
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil || len(runs) != 16 {
		t.Fatalf("results.jsonl: %d runs, %v; want 4 phases of each duet arm and of each split arm", len(runs), err)
	}
	share := 0.0
	for _, r := range runs {
		if r.Method == result.MethodDuet && r.Duet != nil {
			share = r.Duet.ShareCPUs
		}
	}
	if share <= 0 {
		t.Fatalf("no duet phase says the twins' share")
	}
	methods := map[string]result.Method{}
	for _, r := range runs {
		d := r.Duet
		methods[r.Condition] = r.Method
		if r.Error != "" || d == nil {
			t.Fatalf("run %d (%s): error %q, other side %v", r.Seq, r.Condition, r.Error, d)
		}
		if r.Method != result.MethodSplit {
			continue
		}
		// The first twin's server is held to its share in the split's
		// phases too: its backends together use no more.
		if cpus := d.OnCPUs + d.OffCPUs; cpus <= 0 || cpus > 1.15*share {
			t.Errorf("run %d (%s): the groups' backends used %.2f CPUs; want them within the twin's share of %.2f", r.Seq, r.Condition, cpus, share)
		}
		if r.Condition == "log-statements-file (split)" && (r.Events == nil || r.Events.Recorded != r.Driver.Executed || r.Driver.Executed == 0) {
			t.Errorf("run %d: events %+v of the observer's group's %d statements; want exactly those", r.Seq, r.Events, r.Driver.Executed)
		}
	}
	want := map[string]result.Method{experiment.AAName: result.MethodDuet, "log-statements-file": result.MethodDuet,
		experiment.SplitAAName: result.MethodSplit, "log-statements-file (split)": result.MethodSplit}
	if !maps.Equal(methods, want) {
		t.Errorf("arms and their methods %v; want %v", methods, want)
	}
	s, err := readSummary(t, filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var whole, per *result.ConditionSummary
	for i, c := range s.Conditions {
		switch c.Name {
		case "log-statements-file":
			whole = &s.Conditions[i]
		case "log-statements-file (split)":
			per = &s.Conditions[i]
		}
	}
	if whole == nil || per == nil || whole.Measures != result.MeasuresWhole || per.Measures != result.MeasuresPerSession || whole.Shared == nil {
		t.Fatalf("rows %+v and %+v; want the whole row, with its shared part, and the per-session row", whole, per)
	}
	if w, p := whole.Overhead, per.Overhead; w.Basis == p.Basis && math.Abs(whole.Shared.Pct-(w.Pct-p.Pct)) > 1e-6 {
		t.Errorf("shared part %.3f; want the whole %.3f less the per-session %.3f", whole.Shared.Pct, w.Pct, p.Pct)
	}
	for _, want := range []string{"shared: log-statements-file: ", "log-statements-file (split)", "baseline A/A (split)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("journals left: %v", left)
	}
}

// A split on an external server (one server, no twin), the default
// there for observers that split: its settings are as before, the
// observer's group alone is logged, and, the server running on this
// machine (its backends found to be this machine's processes), each
// group's backends' CPU is read as on a managed server.
func TestSplitExternal(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	dsn, settings := externalServer(t)
	before := settings()
	wl, err := workload.Lookup("credit-top1")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Lookup(wl.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.New(dsn, postgres.Options{Schema: engine.Home}).Load(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	// No --method: on one server with no twin, an observer that splits
	// is measured by split.
	stdout, stderr := runOK(t, "run", "--dsn", dsn, "--allow-changes", "--observers", "log-statements-file",
		"--rounds", "2", "--duration", "1s", "--warmup", "500ms", "--clients", "2", "--count=false", "--out", out)
	if want := "method split, not duet: an external server (--dsn) has no twin"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil || len(runs) != 4 {
		t.Fatalf("results.jsonl: %d runs, %v; want 2 phases of each arm", len(runs), err)
	}
	for _, r := range runs {
		if d := r.Duet; r.Error != "" || d == nil || d.Off.Throughput <= 0 || d.OnServerUS <= 0 || d.OffServerUS <= 0 {
			t.Fatalf("run %d (%s): error %q, groups %+v; want both groups measured, their backends' CPU read", r.Seq, r.Condition, r.Error, r.Duet)
		}
		if r.Condition == "log-statements-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed || r.Events.Executed != r.Driver.Executed) {
			t.Errorf("run %d: events %+v; want the observer's group's statements logged, and no other", r.Seq, r.Events)
		}
	}
	if d := diffSettings(before, settings()); len(d) > 0 {
		t.Errorf("--dsn's settings changed: %v", d)
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("journals left: %v", left)
	}
	assertNoSecret(t, tmp, stdout+stderr)
}

// A split on a managed MariaDB: the general log is kept to the observed
// group by the other group's sql_log_off, the slow log by the observed
// group's long_query_time and the other's slow_query_log=OFF; each log
// holds exactly the observed group's statements, and each group's
// threads' CPU is read.
func TestSplitMariaDB(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	out := filepath.Join(tmp, "out")
	stdout, _ := runOK(t, "run", "--engine", "mariadb", "--method", "split", "--observers", "general-log-file,slow-log-all", "--rounds", "2",
		"--duration", "1s", "--warmup", "500ms", "--clients", "4", "--count=false", "--out", out)
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil || len(runs) != 6 {
		t.Fatalf("results.jsonl: %d runs, %v; want 2 phases of the A/A arm and of each observer", len(runs), err)
	}
	for _, r := range runs {
		d := r.Duet
		if r.Error != "" || r.Method != result.MethodSplit || d == nil || d.Off.Throughput <= 0 || d.OnServerUS <= 0 || d.OffServerUS <= 0 {
			t.Fatalf("run %d (%s): method %s, error %q, groups %+v; want both groups measured, their threads' CPU read", r.Seq, r.Condition, r.Method, r.Error, d)
		}
		if r.Condition == experiment.AAName {
			continue
		}
		if ev := r.Events; ev == nil || ev.Executed != r.Driver.Executed || ev.Recorded != ev.Executed || ev.Executed == 0 {
			t.Errorf("run %d (%s): events %+v, the observer's group executed %d, the other %d; want exactly the observer's group's statements recorded",
				r.Seq, r.Condition, ev, r.Driver.Executed, d.Off.Executed)
		}
		if !strings.Contains(r.Held, "log_output=FILE") {
			t.Errorf("run %d (%s): shared part %q; want the server's log settings named", r.Seq, r.Condition, r.Held)
		}
	}
	if want := "what both groups share is in neither (of this observer: general_log=ON, general_log_file=obsbench-general.log, log_output=FILE)"; !printed(stdout, want) {
		t.Errorf("report lacks %q:\n%s", want, stdout)
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("journals left: %v", left)
	}
}

// A split on an external MariaDB: only the observed group is logged,
// every global variable is as before, and, the server running on this
// machine with a thread per connection, each group's threads' CPU is read.
func TestSplitExternalMariaDB(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	dsn, settings := externalMariaDB(t)
	before := settings()
	out := filepath.Join(tmp, "out")
	stdout, stderr := runOK(t, "run", "--engine", "mariadb", "--method", "split", "--dsn", dsn, "--allow-changes", "--observers", "general-log-file",
		"--rounds", "2", "--duration", "1s", "--warmup", "500ms", "--clients", "2", "--count=false", "--out", out)
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil || len(runs) != 4 {
		t.Fatalf("results.jsonl: %d runs, %v; want 2 phases of each arm", len(runs), err)
	}
	for _, r := range runs {
		// The server runs on this machine, one thread per connection:
		// each group's threads' CPU is read as a managed server's.
		if d := r.Duet; r.Error != "" || d == nil || d.Off.Throughput <= 0 || d.OnServerUS <= 0 || d.OffServerUS <= 0 {
			t.Fatalf("run %d (%s): error %q, groups %+v; want both groups measured, their threads' CPU read", r.Seq, r.Condition, r.Error, r.Duet)
		}
		if r.Condition == "general-log-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed || r.Events.Executed != r.Driver.Executed) {
			t.Errorf("run %d: events %+v; want the observer's group's statements logged, and no other", r.Seq, r.Events)
		}
	}
	if d := diffSettings(before, settings()); len(d) > 0 {
		t.Errorf("--dsn's global variables changed: %v", d)
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("journals left: %v", left)
	}
	assertNoSecret(t, tmp, stdout+stderr)
}

// obsbench killed with SIGKILL in a split on an external MariaDB, the
// shared part in force: `obsbench restore` sets every global variable
// back. The session part needs nothing: it ended with the sessions.
func TestSplitKillThenRestore(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	dsn, settings := externalMariaDB(t)
	before := settings()
	cmd, out := startObsbench(t, state, "run", "--engine", "mariadb", "--method", "split", "--dsn", dsn, "--allow-changes",
		"--observers", "slow-log-all", "--rounds", "4", "--duration", "3s", "--warmup", "300ms", "--clients", "2", "--out", filepath.Join(tmp, "out"))
	path := killWhenChanged(t, state, cmd, out, before, settings)
	stdout, stderr := runOK(t, "restore", "--dsn", dsn)
	if !strings.Contains(stdout, "undid ") {
		t.Errorf("restore said %q; want the changes it undid", stdout)
	}
	if d := diffSettings(before, settings()); len(d) > 0 {
		t.Errorf("after restore the global variables differ from before: %v", d)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("journal %s still there after a complete restore", path)
	}
	assertNoSecret(t, tmp, out.String()+stdout+stderr)
}

// On one external server with no twin, no --method given, the observers
// that split are measured by split, with an A/A arm of their own, and
// the rest whole by auto, and the first lines say which is which.
func TestSplitByDefaultMariaDB(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	dsn, settings := externalMariaDB(t)
	before := settings()
	out := filepath.Join(tmp, "out")
	stdout, stderr := runOK(t, "run", "--engine", "mariadb", "--dsn", dsn, "--allow-changes", "--observers", "general-log-file,flush-log-at-commit-0",
		"--rounds", "2", "--duration", "1s", "--warmup", "300ms", "--alt-duration", "10s", "--clients", "2", "--count=false", "--out", out)
	if want := "by split, between two groups of sessions on the server: general-log-file; the rest whole, by auto"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]result.Method{}
	for _, r := range runs {
		if r.Error != "" {
			t.Fatalf("run %d (%s): %s", r.Seq, r.Condition, r.Error)
		}
		methods[r.Condition] = r.Method
	}
	if methods["general-log-file"] != result.MethodSplit || methods[result.SplitAAName] != result.MethodSplit || methods["flush-log-at-commit-0"] == result.MethodSplit {
		t.Errorf("methods by condition %v; want general-log-file and %q by split, flush-log-at-commit-0 not", methods, result.SplitAAName)
	}
	var s result.Summary
	if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err != nil || json.Unmarshal(b, &s) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	measures := map[string]string{}
	for _, c := range s.Conditions {
		measures[c.Name] = c.Measures
	}
	if measures["general-log-file"] != result.MeasuresPerSession || measures["flush-log-at-commit-0"] != result.MeasuresWhole || measures[result.SplitAAName] != "" {
		t.Errorf("measures by row %v; want general-log-file per-session, flush-log-at-commit-0 whole, the split's A/A none", measures)
	}
	if d := diffSettings(before, settings()); len(d) > 0 {
		t.Errorf("--dsn's global variables changed: %v", d)
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("journals left: %v", left)
	}
	assertNoSecret(t, tmp, stdout+stderr)
}

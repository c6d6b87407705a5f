package observer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/observer"

	// Two engines register their built-in catalogs, the rules for their
	// observers and their add-on words; the built-in catalog is theirs.
	_ "github.com/obsbench/obsbench/internal/engine/mariadb"
	_ "github.com/obsbench/obsbench/internal/engine/postgres"
)

func TestBuiltinCatalog(t *testing.T) {
	cat, err := observer.Builtin()
	if err != nil {
		t.Fatalf("Builtin: %v", err)
	}
	want := []string{"baseline", "baseline-again", "log-statements-file", "log-duration-csv", "log-filtered-out", "auto-explain",
		"auto-explain-analyze", "pg-stat-statements", "pgaudit-read", "pg-wait-sampling",
		"plans-stream", "plans-stream-slow", "plans-stream-lossy", "plans-file-slow",
		"sync-commit-off", "sync-commit-local", "sync-commit-remote-write", "sync-commit-remote-apply",
		"pgaudit-rotated", "pgaudit-stream-lossy",
		"log-statements-stream", "log-statements-stream-lossy", "log-statements-prefix", "log-statements-syslog",
		"pg-stat-statements-planning", "auto-explain-filtered-out", "auto-explain-verbose",
		"pgaudit-read-params", "pgaudit-filtered-out", "log-lock-waits",
		"track-io-timing", "track-functions", "compute-query-id", "log-sampled", "auto-explain-sampled",
		"pg-stat-kcache", "pg-qualstats", "pgaudit-to-file", "logical-decoding", "logical-decoding-slow-consumer",
		"agent-exporter-15s", "agent-heavy-1s"}
	for _, name := range want {
		if _, err := cat.Lookup("postgres", name); err != nil {
			t.Errorf("Lookup(postgres, %s) = %v", name, err)
		}
	}
	if got := cat.Names("postgres"); got[0] != observer.Baseline || len(got) != len(want) {
		t.Errorf("Names = %v; want baseline first and %d entries", got, len(want))
	}
	if n := len(cat.Defaults("postgres")); n < 4 || n > 5 {
		t.Errorf("%d default observers; want 4 or 5", n)
	}
	for _, name := range []string{"baseline", "baseline-again", "general-log-file", "general-log-table", "slow-log-all", "perf-schema",
		"perf-schema-statements-history", "perf-schema-waits", "server-audit-file", "server-audit-syslog", "server-audit-filtered",
		"perf-schema-no-consumer", "perf-schema-filtered-out", "slow-log-filtered-out", "plans-slow-log-filtered-out", "server-audit-table-events",
		"userstat", "slow-log-sampled", "binlog-row", "perf-schema-digests-only", "server-audit-query-limit",
		"agent-exporter-15s", "agent-heavy-1s"} {
		if _, err := cat.Lookup("mariadb", name); err != nil {
			t.Errorf("Lookup(mariadb, %s) = %v", name, err)
		}
	}
	if n := len(cat.Defaults("mariadb")); n != 4 {
		t.Errorf("%d default mariadb observers; want 4", n)
	}
}

func TestLookupSuggests(t *testing.T) {
	cat, _ := observer.Builtin()
	tests := []struct{ name, suggestion string }{
		{"log-statement", "log-statements-file"},
		{"pgaudit", "pgaudit-read"},
		{"pg-stat-statement", "pg-stat-statements"},
		{"zzzzzzzzzzzzzz", ""},
	}
	for _, tt := range tests {
		_, err := cat.Lookup("postgres", tt.name)
		var ue *observer.UnknownError
		if !errors.As(err, &ue) {
			t.Fatalf("Lookup(%q) = %v; want an UnknownError", tt.name, err)
		}
		if ue.Suggestion != tt.suggestion {
			t.Errorf("Lookup(%q) suggests %q; want %q", tt.name, ue.Suggestion, tt.suggestion)
		}
	}
}

// Each bad file is reported with file:line:column of what is wrong.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"not a list", "name: x\n", "f.yaml:1:5: expected a list of observers"},
		{"unknown field", "- name: x\n  engine: postgres\n  description: d\n  setings: {a: b}\n", "f.yaml:4:3: unknown field \"setings\""},
		{"bad name", "- name: Bad_Name\n  engine: postgres\n  description: d\n", "f.yaml:1:3: name \"Bad_Name\""},
		{"bad engine", "- name: x\n  engine: oracle\n  description: d\n", "f.yaml:2:3: engine \"oracle\" is not one of postgres, mariadb"},
		{"no engine", "- name: x\n  description: d\n", "f.yaml:1:3: engine is missing"},
		{"no description", "- name: x\n  engine: postgres\n", "f.yaml:1:3: description is missing"},
		{"wrong type", "- name: x\n  engine: postgres\n  description: d\n  preload: 5\n", "f.yaml:4:"},
		{"bad event source", "- name: x\n  engine: postgres\n  description: d\n  events: {source: syslog}\n", "f.yaml:4:3: events source \"syslog\""},
		{"bad regexp", "- name: x\n  engine: postgres\n  description: d\n  events: {source: server-log, match: '('}\n", "f.yaml:4:3: events match"},
		{"preload as setting", "- name: x\n  engine: postgres\n  description: d\n  settings: {shared_preload_libraries: a}\n", "f.yaml:4:3: shared_preload_libraries is set with preload:"},
		{"duplicate", "- name: x\n  engine: postgres\n  description: d\n- name: x\n  engine: postgres\n  description: e\n", "f.yaml:4:3: observer \"x\" for postgres is defined twice (first at f.yaml:1)"},
		{"syntax", "- name: [x\n", "f.yaml:1:"},
		{"mark without placeholder", "- name: x\n  engine: mariadb\n  description: d\n  events: {source: sql, query: 'SELECT 1', mark: 'SELECT 0'}\n", "f.yaml:4:3: events mark: and {{mark}} in query: go together"},
		{"placeholder without mark", "- name: x\n  engine: mariadb\n  description: d\n  events: {source: sql, query: 'SELECT {{mark}}'}\n", "f.yaml:4:3: events mark: and {{mark}} in query: go together"},
		{"file setting on sql", "- name: x\n  engine: mariadb\n  description: d\n  events: {source: sql, query: 'SELECT 1', file_setting: general_log_file}\n", "f.yaml:4:3: events file_setting: is for source server-log"},
		{"sampled all", "- name: x\n  engine: postgres\n  description: d\n  events: {source: server-log, match: '{{tag}}', sampled: 1}\n", "f.yaml:4:3: events sampled: 1: want the share of statements recorded, above 0 and below 1"},
		{"stall without period", "- name: x\n  engine: postgres\n  description: d\n  settings: {log_directory: '{{sink_dir}}'}\n  sink: {kind: slow-dir, write_delay: 1ms, stall: 300ms}\n", "f.yaml:5:3: stall \"300ms\": want how long and how often"},
		{"stall as long as its period", "- name: x\n  engine: postgres\n  description: d\n  settings: {log_directory: '{{sink_dir}}'}\n  sink: {kind: slow-dir, write_delay: 1ms, stall: 3s every 3s}\n", "f.yaml:5:3: stall \"3s every 3s\""},
		{"stall on a stream", "- name: x\n  engine: postgres\n  description: d\n  sink: {kind: stream, stall: 1s every 2s}\n", "f.yaml:4:3: sink write_delay, capacity and stall are for kind slow-dir"},
		{"poller without queries", "- name: x\n  engine: postgres\n  description: d\n  poller: {interval: 15s}\n", "f.yaml:4:3: poller queries: want the agent's statements"},
		{"poller interval", "- name: x\n  engine: postgres\n  description: d\n  poller: {interval: 2h, queries: [SELECT 1]}\n", "f.yaml:4:3: poller interval \"2h\": want a duration from 10ms to 1h"},
		{"consumer plugin", "- name: x\n  engine: postgres\n  description: d\n  consumer: {plugin: 'wal 2 json'}\n", "f.yaml:4:3: consumer plugin: want an output plugin's name"},
		{"bad file setting", "- name: x\n  engine: mariadb\n  description: d\n  events: {source: server-log, match: x, file_setting: 'a b'}\n", "f.yaml:4:3: events file_setting \"a b\" is not a server setting name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := observer.Parse("f.yaml", []byte(tt.yaml), "postgres", "mariadb")
			var se *observer.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse = %v; want a SyntaxError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Parse = %q; want prefix %q", err, tt.want)
			}
		})
	}
}

func TestLoadFileAddsObservers(t *testing.T) {
	cat, _ := observer.Builtin()
	if err := cat.LoadFile(filepath.Join("testdata", "extra.yaml")); err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	o, err := cat.Lookup("postgres", "log-connections")
	if err != nil {
		t.Fatal(err)
	}
	if o.Settings["log_connections"] != "on" || o.Source != "testdata/extra.yaml:3" {
		t.Errorf("log-connections = %+v", o)
	}
	// A user file cannot silently replace a built-in entry.
	dup := filepath.Join(t.TempDir(), "dup.yaml")
	os.WriteFile(dup, []byte("- name: baseline\n  engine: postgres\n  description: mine\n"), 0o644)
	if err := cat.LoadFile(dup); err == nil || !strings.Contains(err.Error(), "already defined at catalog/postgres.yaml") {
		t.Errorf("LoadFile(dup) = %v; want an already-defined error", err)
	}
	if err := cat.LoadFile("testdata/missing.yaml"); err == nil {
		t.Error("LoadFile(missing) = nil; want an error")
	}
}

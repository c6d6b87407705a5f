package sqlserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/observer"
)

// A bad xe:, trace: or availability_group: entry, or an events source
// that counts from one, is reported with file:line:column of the section
// at fault: the catalog decodes the section into this package's types,
// which check it (observer.Object), then CheckObserver.
func TestSectionParseErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"xe without events", "- name: x\n  engine: sqlserver\n  description: d\n  xe: {targets: [{kind: ring_buffer}]}\n", "f.yaml:4:3: an XE session needs at least one event"},
		{"xe event without package", "- name: x\n  engine: sqlserver\n  description: d\n  xe: {events: [{name: lock_acquired}]}\n", "f.yaml:4:3: event \"lock_acquired\" must be package.event"},
		{"xe unknown target", "- name: x\n  engine: sqlserver\n  description: d\n  xe: {events: [{name: sqlserver.a}], targets: [{kind: etw_classic_sync_target}]}\n", "f.yaml:4:3: target kind \"etw_classic_sync_target\" is not one of ring_buffer"},
		{"xe quote in an option", "- name: x\n  engine: sqlserver\n  description: d\n  xe: {events: [{name: sqlserver.a}], targets: [{kind: event_file, set: {filename: \"a'b\"}}]}\n", "f.yaml:4:3: target option filename: a value may not contain a quote"},
		{"xe latency", "- name: x\n  engine: sqlserver\n  description: d\n  xe: {events: [{name: sqlserver.a}], max_dispatch_latency: 5m}\n", "f.yaml:4:3: max_dispatch_latency \"5m\" is INFINITE or whole seconds"},
		{"xe predicate with a second statement", "- name: x\n  engine: sqlserver\n  description: d\n  xe: {events: [{name: sqlserver.a, where: \"1 = 1; DROP DATABASE x\"}]}\n", "f.yaml:4:3: a predicate is one expression"},
		{"trace without size", "- name: x\n  engine: sqlserver\n  description: d\n  trace: {events: [41], columns: [1]}\n", "f.yaml:4:3: a trace needs max_file_size_mb:"},
		{"trace bad op", "- name: x\n  engine: sqlserver\n  description: d\n  trace: {events: [41], columns: [1], max_file_size_mb: 5, filters: [{column: 35, op: \"==\", value: x}]}\n", "f.yaml:4:3: filter op \"==\" is not one of"},
		{"trace files without rollover", "- name: x\n  engine: sqlserver\n  description: d\n  trace: {events: [41], columns: [1], max_file_size_mb: 5, max_files: 3}\n", "f.yaml:4:3: max_files needs rollover: true"},
		{"ag mode", "- name: x\n  engine: sqlserver\n  description: d\n  availability_group: {mode: SYNC}\n", "f.yaml:4:3: mode \"SYNC\" is SYNCHRONOUS_COMMIT or ASYNCHRONOUS_COMMIT"},
		{"settings on sqlserver", "- name: x\n  engine: sqlserver\n  description: d\n  settings: {a: b}\n", "f.yaml:4:3: a sqlserver observer is an xe:, trace: or availability_group: entry"},
		{"xe events source without a session", "- name: x\n  engine: sqlserver\n  description: d\n  events: {source: xe, match: sql_statement_completed}\n", "f.yaml:4:3: events source xe counts what the observer's xe: session recorded"},
		{"xe events without match", "- name: x\n  engine: sqlserver\n  description: d\n  xe: {events: [{name: sqlserver.a}]}\n  events: {source: xe}\n", "f.yaml:5:3: events source xe needs match:"},
		{"xe on postgres", "- name: x\n  engine: postgres\n  description: d\n  xe: {events: [{name: sqlserver.a}]}\n", "f.yaml:4:3: xe: (an Extended Events session) is for engine sqlserver"},
		{"xe source on mariadb", "- name: x\n  engine: mariadb\n  description: d\n  events: {source: trace, match: \"41\"}\n", "f.yaml:4:3: events source trace is for engine sqlserver"},
		{"xe unknown field", "- name: x\n  engine: sqlserver\n  description: d\n  xe: {events: [{name: sqlserver.a, bogus: 1}]}\n", "f.yaml:4:37: unknown field \"bogus\""},
		{"xe wrong type", "- name: x\n  engine: sqlserver\n  description: d\n  xe: {events: [{name: sqlserver.a}], max_memory_kb: lots}\n", "f.yaml:4:54: cannot unmarshal string into Go struct field XESession.MaxMemoryKB of type int"},
		{"trace source on an xe session", "- name: x\n  engine: sqlserver\n  description: d\n  xe: {events: [{name: sqlserver.a}]}\n  events: {source: trace, match: '41'}\n", "f.yaml:5:3: events source trace counts what the observer's trace: recorded; it has none"},
		{"volume on postgres", "- name: x\n  engine: postgres\n  description: d\n  events: {source: sql, query: 'SELECT 1', volume: true}\n", "f.yaml:4:3: events volume: is for sources xe and trace"},
		{"bad event source", "- name: x\n  engine: sqlserver\n  description: d\n  events: {source: syslog}\n", "f.yaml:4:3: events source \"syslog\" is not one of server-log, stream, sql, xe, trace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := observer.Parse("f.yaml", []byte(tt.yaml), "postgres", "mariadb", "sqlserver")
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

// Each section decodes into this package's type, is summarized by it,
// and is written back to JSON under its own key, where the observer's
// field was.
func TestSectionsDecodeAndSummarize(t *testing.T) {
	obs, err := observer.Parse("f.yaml", []byte(`- name: x
  engine: sqlserver
  description: d
  xe: {events: [{name: sqlserver.lock_acquired}], targets: [{kind: ring_buffer}], retention: NO_EVENT_LOSS}
  trace: {events: [41], columns: [1], max_file_size_mb: 5}
  availability_group: {mode: ASYNCHRONOUS_COMMIT}
  events: {source: xe, match: lock_acquired, volume: true}
`), "sqlserver")
	if err != nil {
		t.Fatal(err)
	}
	o := obs[0]
	if x, tr, ag := sessionOf(o), traceOf(o), groupOf(o); x == nil || x.Retention != RetainNoLoss || tr == nil || tr.MaxFileSizeMB != 5 || ag == nil || ag.Mode != "ASYNCHRONOUS_COMMIT" {
		t.Fatalf("sections = %+v", o.Objects)
	}
	want := "XE session: sqlserver.lock_acquired -> ring_buffer, NO_EVENT_LOSS SQL Trace to file: 1 event(s), 5 MB files availability group replicas ASYNCHRONOUS_COMMIT"
	if got := o.Summary(); got != want {
		t.Errorf("Summary = %q; want %q", got, want)
	}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"name":"x","engine":"sqlserver","description":"d",` +
		`"xe":{"events":[{"name":"sqlserver.lock_acquired"}],"targets":[{"kind":"ring_buffer"}],"retention":"NO_EVENT_LOSS"},` +
		`"trace":{"events":[41],"columns":[1],"max_file_size_mb":5},"availability_group":{"mode":"ASYNCHRONOUS_COMMIT"},` +
		`"events":{"source":"xe","match":"lock_acquired","volume":true},"source":"f.yaml:1"}`
	if string(b) != wantJSON {
		t.Errorf("JSON =\n%s\nwant\n%s", b, wantJSON)
	}
	var back observer.Observer
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if b2, _ := json.Marshal(back); string(b2) != string(b) || sessionOf(back) == nil {
		t.Errorf("JSON round trip =\n%s\nwant\n%s", b2, b)
	}
}

// Every built-in sqlserver observer reads back from its JSON as it was.
func TestCatalogJSONRoundTrip(t *testing.T) {
	for _, o := range servertest.Catalog(t).All("sqlserver") {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var back observer.Observer
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", o.Name, err)
		}
		if b2, _ := json.Marshal(back); string(b2) != string(b) || back.Summary() != o.Summary() {
			t.Errorf("%s: JSON round trip =\n%s\nwant\n%s", o.Name, b2, b)
		}
	}
}

package sqlserver

import (
	"strings"
	"testing"
)

// Rows as sys.traces and the session views return them on a server with
// its default trace, a Profiler attached, system_health and one session
// left by obsbench.
func TestFormatInspection(t *testing.T) {
	tests := []struct {
		got  string
		want []string
	}{
		{FormatTrace(TraceRow{ID: 1, Status: 1, Path: `C:\MSSQL\Log\log_12.trc`, Default: true, MaxSizeMB: 20, MaxFiles: 5, Rollover: true, Events: 48213, Dropped: -1}),
			[]string{`trace 1, running, default trace C:\MSSQL\Log\log_12.trc: 48213 events, no drop counter; 20 MB files, rollover, 5 kept`}},
		{FormatTrace(TraceRow{ID: 2, Status: 1, Rowset: true, Events: 1200, Dropped: 37, ReaderSPID: 61}),
			[]string{"trace 2, running, rowset trace (Profiler or SMO; reader session 61)", "1200 events, 37 dropped"}},
		{FormatSession(SessionRow{Name: "system_health", Running: true, Retention: "ALLOW_SINGLE_EVENT_LOSS", DispatchLatencyMS: 120000, Targets: "event_file,ring_buffer"}),
			[]string{"system_health (running): event_file,ring_buffer; ALLOW_SINGLE_EVENT_LOSS, max dispatch latency 120 s; dropped 0 events, 0 buffers", "[built in: part of the baseline]"}},
		{FormatSession(SessionRow{Name: "obsbench_xe_locks_no_target_no_loss", Running: true, Retention: "NO_EVENT_LOSS", DispatchLatencyMS: 30000, Causality: true, Blocked: 812}),
			[]string{"obsbench_xe_locks_no_target_no_loss (running): no target; NO_EVENT_LOSS", "causality tracking", "firing blocked 812 (blocked_event_fire_time, unit undocumented)"}},
		{FormatSession(SessionRow{Name: "obsbench_xe_statements_infinite_latency", Running: true, Retention: "ALLOW_SINGLE_EVENT_LOSS", DispatchLatencyMS: -1, Targets: "ring_buffer"}),
			[]string{"max dispatch latency infinite"}},
		{FormatSession(SessionRow{Name: "audit_old", Retention: "NO_EVENT_LOSS", Targets: "event_file"}),
			[]string{"audit_old (defined, stopped): event_file; NO_EVENT_LOSS"}},
	}
	for _, tt := range tests {
		for _, w := range tt.want {
			if !strings.Contains(tt.got, w) {
				t.Errorf("%q lacks %q", tt.got, w)
			}
		}
	}
	if s := FormatSession(SessionRow{Name: "obsbench_x", Running: true}); strings.Contains(s, "built in") {
		t.Errorf("obsbench's session marked as built in: %s", s)
	}
}

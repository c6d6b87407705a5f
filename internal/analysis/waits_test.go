package analysis

import (
	"testing"

	"github.com/obsbench/obsbench/internal/collect"
)

func TestSummarizeWaitsFlagsSignatures(t *testing.T) {
	base := collect.Waits{Ticks: 100, Counts: map[string]int64{"CPU": 1580, "LWLock:WALWrite": 20}}
	tests := []struct {
		name string
		w    collect.Waits
		want []string
	}{
		{"a new OS wait is a signature", collect.Waits{Ticks: 100, Counts: map[string]int64{"CPU": 1000, "OS:pipe_write": 600}}, []string{"OS:pipe_write"}},
		{"more CPU is not", collect.Waits{Ticks: 100, Counts: map[string]int64{"CPU": 1600}}, []string{}},
		{"a wait the baseline had is not", collect.Waits{Ticks: 100, Counts: map[string]int64{"CPU": 1200, "LWLock:WALWrite": 400}}, []string{}},
		{"a rare new wait is not", collect.Waits{Ticks: 100, Counts: map[string]int64{"CPU": 1590, "IO:DataFileRead": 10}}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := summarizeWaits(tt.w, base, nil)
			if len(ws.Signatures) != len(tt.want) || (len(tt.want) > 0 && ws.Signatures[0] != tt.want[0]) {
				t.Fatalf("signatures %v, want %v (top %+v)", ws.Signatures, tt.want, ws.Top)
			}
			if ws.ActiveSessions != 16 {
				t.Errorf("active sessions %v, want 16", ws.ActiveSessions)
			}
		})
	}
	if ws := summarizeWaits(collect.Waits{}, base, nil); ws != nil {
		t.Errorf("no samples gave %+v, want nil", ws)
	}
}

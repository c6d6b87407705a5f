package analysis

import (
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// An observer that samples statements is warned about only when its
// count lies outside what a sample of its rate records; one that
// records every statement is warned about any difference.
func TestEventWarningsSampled(t *testing.T) {
	for _, tt := range []struct {
		e    result.Events
		warn string // part of the warning; "" for none
	}{
		{result.Events{Recorded: 1012, Executed: 10_000, SampleRate: 0.1}, ""},
		{result.Events{Recorded: 10_000, Executed: 10_000, SampleRate: 0.1}, "sampled at 0.1: outside the"},
		{result.Events{Recorded: 500, Executed: 10_000, SampleRate: 0.1}, "sampled at 0.1: outside the"},
		{result.Events{Recorded: 1012, Executed: 10_000}, "recorded 1012 events for 10000 statements executed (-8988)"},
	} {
		got := strings.Join(eventWarnings("x", &tt.e), "\n")
		if (tt.warn == "") != (got == "") || !strings.Contains(got, tt.warn) {
			t.Errorf("%+v: warnings %q; want one with %q", tt.e, got, tt.warn)
		}
	}
}

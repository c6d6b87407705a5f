package observer_test

import (
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/observer"
)

// A dose gives one of the observer's own settings a value, leaving the
// catalog's entry as it was; where the setting is the one that sets the
// share sampled, the count follows it.
func TestDosed(t *testing.T) {
	cat, _ := observer.Builtin()
	pg, _ := cat.Lookup("postgres", "auto-explain-sampled")
	for _, tt := range []struct {
		setting, value string
		sampled        float64 // 0: every statement counted exactly
		counted        bool
		err            string
	}{
		{"auto_explain.sample_rate", "0.01", 0.01, true, ""},
		{"auto_explain.sample_rate", "1", 0, true, ""},
		{"auto_explain.sample_rate", "0", 0, false, ""},
		{"auto_explain.log_timing", "off", 0.1, true, ""},
		{"auto_explain.sample_rate", "often", 0, false, "want a number"},
		{"track_io_timing", "on", 0, false, "has no setting track_io_timing; want one of its own: auto_explain.log_analyze"},
	} {
		o, err := pg.Dosed(tt.setting, tt.value)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s=%s: %v; want an error with %q", tt.setting, tt.value, err, tt.err)
			}
			continue
		}
		if err != nil || o.Settings[tt.setting] != tt.value || (o.Events != nil) != tt.counted {
			t.Fatalf("%s=%s: %+v, %v", tt.setting, tt.value, o, err)
		}
		if o.Events != nil && o.Events.Sampled != tt.sampled {
			t.Errorf("%s=%s: sampled %g; want %g", tt.setting, tt.value, o.Events.Sampled, tt.sampled)
		}
	}
	if again, _ := cat.Lookup("postgres", "auto-explain-sampled"); again.Settings["auto_explain.sample_rate"] != "0.1" || again.Events.Sampled != 0.1 {
		t.Errorf("the catalog's entry changed: %+v", again)
	}
	// A setting whose value N samples 1/N.
	inverse := pg
	inverse.Settings = map[string]string{"n": "10"}
	inverse.Events = &observer.EventCounter{Source: observer.SourceServerLog, Sampled: 0.1, SampledBy: "1/n"}
	if o, err := inverse.Dosed("n", "100"); err != nil || o.Events.Sampled != 0.01 {
		t.Errorf("n=100: %+v, %v; want a sample of 1/100", o.Events, err)
	}
}

package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/spec"
)

// switchAll is an in-memory target whose observers a reload switches
// entirely: under --method auto they all alternate. Only what planning
// calls is implemented.
type switchAll struct{ engine.Target }

func (switchAll) Split(ctx context.Context, o observer.Observer) (held, switched observer.Observer, err error) {
	return observer.Observer{Name: o.Name + "/held"}, o, nil
}

func (switchAll) Settings(ctx context.Context) (map[string]string, error) {
	return map[string]string{}, nil
}

// A flag of a method no condition uses is named in a warning, with its
// value; flags not given are not.
func TestUnusedFlagsWarn(t *testing.T) {
	obs := []observer.Observer{{Name: observer.Baseline}, {Name: "log", Settings: map[string]string{"log_statement": "all"}}}
	for _, tt := range []struct {
		method experiment.Method
		given  []string
		want   string // "" for no warning
	}{
		{"auto", []string{"rounds", "duration"}, "--rounds 5 --duration 8s: no condition runs in rounds (every observer of this run alternates)"},
		{"auto", []string{"alt-duration"}, ""},
		{"rounds", []string{"alt-duration", "phase-max"}, "--alt-duration 20s --phase-max 4: no condition alternates (--method rounds)"},
		{"rounds", []string{"rounds"}, ""},
		{"alternation", []string{"duration"}, "--duration 8s: no condition runs in rounds"},
		{"duet", []string{"max-time"}, ""}, // it sizes the duet's phases
		{"duet", []string{"max-time", "rounds"}, "--max-time 5m0s: no condition alternates (--method duet)"},
	} {
		c := Experiment{Spec: spec.Spec{Method: tt.method, Rounds: 5, Duration: 8 * time.Second, MaxTime: 5 * time.Minute, Alternation: spec.Alternation{Duration: 20 * time.Second, PhaseMax: 4}}}
		c.Choose(tt.given...)
		arms, err := experiment.Arms(context.Background(), experiment.Config{Target: switchAll{}, Observers: obs, Method: experiment.Method(tt.method)})
		if err != nil {
			t.Fatal(err)
		}
		warns := unusedFlags(c, arms)
		got := strings.Join(warns, "\n")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("--method %s with %v: warnings %q; want %q", tt.method, tt.given, got, tt.want)
		}
	}
}

package experiment_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
)

// splitter is an in-memory target for planning: it splits observers as
// an engine would (a preload and restart-only settings held, the rest
// switched) and reports the server's settings. Only what Arms calls is
// implemented.
type splitter struct {
	engine.Target
	restartOnly map[string]bool
	settings    map[string]string
}

func (s splitter) Split(ctx context.Context, o observer.Observer) (held, switched observer.Observer, err error) {
	held = observer.Observer{Name: o.Name + "/held", Preload: o.Preload, Settings: map[string]string{}}
	switched = observer.Observer{Name: o.Name, Settings: map[string]string{}}
	for k, v := range o.Settings {
		if s.restartOnly[k] {
			held.Settings[k] = v
		} else {
			switched.Settings[k] = v
		}
	}
	return held, switched, nil
}

func (s splitter) Settings(ctx context.Context) (map[string]string, error) { return s.settings, nil }

func TestArms(t *testing.T) {
	obs := []observer.Observer{
		{Name: observer.Baseline},
		{Name: "stats", Preload: []string{"pg_stat_statements"}, Settings: map[string]string{"track": "all"}},
		{Name: "log", Settings: map[string]string{"logging_collector": "on", "log_statement": "'all'"}},
		{Name: "plans-held", Settings: map[string]string{"shared_memory": "1GB"}},
	}
	type arm struct {
		Name   string
		Method experiment.Method
	}
	for _, tt := range []struct {
		name      string
		method    experiment.Method
		collector string // the server's logging_collector
		want      []arm
	}{
		{"auto measures whole and switchable part", experiment.MethodAuto, "off", []arm{
			{"baseline", "rounds"}, {"baseline A/A", "alternation"},
			{"stats", "rounds"}, {"stats (switchable)", "alternation"},
			{"log", "rounds"}, {"log (switchable)", "alternation"},
			{"plans-held", "rounds"}}},
		{"a held setting already in force holds nothing", experiment.MethodAuto, "on", []arm{
			{"baseline", "rounds"}, {"baseline A/A", "alternation"},
			{"stats", "rounds"}, {"stats (switchable)", "alternation"},
			{"log", "alternation"},
			{"plans-held", "rounds"}}},
		{"rounds measures whole only", experiment.MethodRounds, "off", []arm{
			{"baseline", "rounds"}, {"stats", "rounds"}, {"log", "rounds"}, {"plans-held", "rounds"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			target := splitter{restartOnly: map[string]bool{"logging_collector": true, "shared_memory": true},
				settings: map[string]string{"logging_collector": tt.collector, "shared_memory": "128MB"}}
			arms, err := experiment.Arms(context.Background(), experiment.Config{Target: target, Observers: obs, Method: tt.method,
				Rounds: 6, Alternation: experiment.Alternation{Reps: 1}})
			if err != nil {
				t.Fatal(err)
			}
			var got []arm
			for _, a := range arms {
				got = append(got, arm{a.Name, a.Method})
				// Whose cost each arm measures, as planned: the
				// (switchable) arm the switchable part, every other
				// observer's arm the whole (log alternates whole when
				// its held part is already in force).
				want := "whole"
				switch {
				case strings.HasPrefix(a.Name, "baseline"):
					want = ""
				case strings.HasSuffix(a.Name, experiment.SwitchableSuffix):
					want = "switchable part"
				}
				if a.Measures != want {
					t.Errorf("%s measures %q; want %q", a.Name, a.Measures, want)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("arms %v; want %v", got, tt.want)
			}
		})
	}
	// Alternation alone cannot measure what only a restart switches.
	_, err := experiment.Arms(context.Background(), experiment.Config{Target: splitter{restartOnly: map[string]bool{"shared_memory": true}},
		Observers: obs[3:], Method: experiment.MethodAlternation})
	if err == nil {
		t.Error("alternation of an observer that no reload switches: no error")
	}
}

// Auto on one server with a split given: the observers that split get a
// split arm and an A/A split of their own beside the others' arms, and
// no baseline rounds when no observer runs in rounds.
func TestArmsAutoWithSplit(t *testing.T) {
	target := splitter{restartOnly: map[string]bool{"shared_memory": true}, settings: map[string]string{"shared_memory": "128MB"}}
	divide := func(o observer.Observer) (observer.SessionPart, error) {
		if _, ok := o.Settings["log_statement"]; !ok {
			return observer.SessionPart{}, &observer.Unsplittable{Observer: o.Name, Reason: "no"}
		}
		return observer.SessionPart{Shared: observer.Observer{Name: o.Name + "/held"}, Session: o.Settings}, nil
	}
	type arm struct {
		Name     string
		Method   experiment.Method
		Measures string
	}
	for _, tt := range []struct {
		name string
		obs  []observer.Observer
		want []arm
	}{
		{"mixed", []observer.Observer{{Name: observer.Baseline}, {Name: "log", Settings: map[string]string{"log_statement": "all"}},
			{Name: "held", Settings: map[string]string{"shared_memory": "1GB"}}}, []arm{
			{"baseline", "rounds", ""}, {experiment.SplitAAName, "split", ""}, {"log", "split", "per-session"}, {"held", "rounds", "whole"}}},
		{"all split", []observer.Observer{{Name: observer.Baseline}, {Name: "log", Settings: map[string]string{"log_statement": "all"}}}, []arm{
			{experiment.SplitAAName, "split", ""}, {"log", "split", "per-session"}}},
	} {
		arms, err := experiment.Arms(context.Background(), experiment.Config{Target: target, Observers: tt.obs, Method: experiment.MethodAuto,
			Rounds: 6, Alternation: experiment.Alternation{Reps: 1}, Split: &experiment.Split{Divide: divide}})
		if err != nil {
			t.Fatal(err)
		}
		var got []arm
		for _, a := range arms {
			got = append(got, arm{a.Name, a.Method, a.Measures})
			if a.Method == experiment.MethodSplit && (a.Reps != 6 || (a.Name == "log") != (a.Part != nil)) {
				t.Errorf("%s: %s: %d phases, part %v; want 6, the observer's part", tt.name, a.Name, a.Reps, a.Part)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: arms %v; want %v", tt.name, got, tt.want)
		}
	}
}

// split,duet: the duet's arms, then the split's beside them with names of
// their own, each measuring what its method measures; an observer that
// does not split is refused by name, as by --method split.
func TestArmsSplitDuet(t *testing.T) {
	divide := func(o observer.Observer) (observer.SessionPart, error) {
		if _, ok := o.Settings["log_statement"]; !ok {
			return observer.SessionPart{}, &observer.Unsplittable{Observer: o.Name, Reason: "no session part"}
		}
		return observer.SessionPart{Shared: observer.Observer{Name: o.Name + "/held"}, Session: o.Settings}, nil
	}
	cfg := experiment.Config{Target: splitter{}, Method: experiment.MethodSplitDuet, Rounds: 8, Seed: 3, Split: &experiment.Split{Divide: divide},
		Observers: []observer.Observer{{Name: observer.Baseline}, {Name: "log", Settings: map[string]string{"log_statement": "all"}}}}
	arms, err := experiment.Arms(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	type arm struct {
		Name, Measures string
		Method         experiment.Method
		Part           bool
	}
	var got []arm
	for _, a := range arms {
		got = append(got, arm{a.Name, a.Measures, a.Method, a.Part != nil})
		if a.Reps != 8 || a.Flipped != experiment.DuetFlipped(3, a.Name) {
			t.Errorf("%s: %d phases, flipped %v; want 8, the order drawn for its own name", a.Name, a.Reps, a.Flipped)
		}
	}
	want := []arm{{experiment.AAName, "", "duet", false}, {"log", "whole", "duet", false},
		{experiment.SplitAAName, "", "split", false}, {"log" + experiment.SplitSuffix, "per-session", "split", true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("arms %v; want %v", got, want)
	}
	cfg.Observers = append(cfg.Observers, observer.Observer{Name: "sampler"})
	if _, err := experiment.Arms(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "sampler") {
		t.Errorf("an observer that does not split: %v; want it refused by name", err)
	}
}

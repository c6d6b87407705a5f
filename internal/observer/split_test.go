package observer

import (
	"maps"
	"testing"
)

func TestSplit(t *testing.T) {
	o := Observer{Name: "o", Engine: "postgres", Preload: []string{"lib"}, Extensions: []string{"ext"},
		Settings:     map[string]string{"start": "on", "track": "all", "plain": "1"},
		AlternateOff: map[string]string{"track": "none"},
		EnableSQL:    []string{"SELECT 1"}, Events: &EventCounter{Source: SourceSQL}}
	startOnly := func(n string) bool { return n == "start" }
	for _, c := range []struct {
		name                   string
		startOnly              func(string) bool
		wantHeld, wantSwitched map[string]string
	}{
		{"start-only held", startOnly, map[string]string{"start": "on", "track": "none"}, map[string]string{"track": "all", "plain": "1"}},
		{"nil: all switched", nil, map[string]string{"track": "none"}, map[string]string{"start": "on", "track": "all", "plain": "1"}},
	} {
		held, switched := Split(o, c.startOnly)
		if !maps.Equal(held.Settings, c.wantHeld) || !maps.Equal(switched.Settings, c.wantSwitched) {
			t.Errorf("%s: held %v, switched %v; want %v, %v", c.name, held.Settings, switched.Settings, c.wantHeld, c.wantSwitched)
		}
		if held.Name != "o/held" || len(held.Preload) != 1 || len(held.Extensions) != 1 || held.Events != nil || held.EnableSQL != nil {
			t.Errorf("%s: held = %+v; want the preload and extensions, no events or statements", c.name, held)
		}
		if switched.Name != "o" || switched.Events == nil || len(switched.EnableSQL) != 1 || switched.Preload != nil {
			t.Errorf("%s: switched = %+v; want the events and statements, no preload", c.name, switched)
		}
	}
}

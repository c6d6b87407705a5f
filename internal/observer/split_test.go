package observer

import (
	"errors"
	"maps"
	"slices"
	"strings"
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

func TestSplitSessions(t *testing.T) {
	perSession := SessionRules{PerSession: func(n string) bool { return n == "track" || n == "plain" }}
	o := Observer{Name: "o", Engine: "postgres", Preload: []string{"lib"},
		Settings:     map[string]string{"start": "on", "track": "all", "plain": "1"},
		AlternateOff: map[string]string{"track": "none"}, Events: &EventCounter{Source: SourceSQL}}
	p, err := SplitSessions(o, perSession)
	if err != nil {
		t.Fatal(err)
	}
	// A setting with an off value is held off for the server, so that
	// the other group does not record; the observed group sets it on.
	if want := map[string]string{"start": "on", "track": "none"}; !maps.Equal(p.Shared.Settings, want) {
		t.Errorf("shared %v; want %v", p.Shared.Settings, want)
	}
	if want := map[string]string{"track": "all", "plain": "1"}; !maps.Equal(p.Session, want) {
		t.Errorf("session %v; want %v", p.Session, want)
	}
	if p.Shared.Events == nil || len(p.Shared.Preload) != 1 {
		t.Errorf("shared %+v; want the preload and the event counter", p.Shared)
	}
	if got, want := p.SharedWork(), []string{"preload lib", "start=on", "track=none"}; !slices.Equal(got, want) {
		t.Errorf("shared work %q; want %q", got, want)
	}
	for _, c := range []struct {
		name string
		o    Observer
		want string
	}{
		{"statements", Observer{Name: "s", Settings: map[string]string{"track": "all"}, EnableSQL: []string{"SELECT 1"}}, "switched by statements"},
		{"none per session", Observer{Name: "n", Settings: map[string]string{"start": "on"}}, "none of its settings (start) can be set by a session"},
		{"no settings", Observer{Name: "e", Preload: []string{"lib"}}, "it has no settings"},
	} {
		_, err := SplitSessions(c.o, perSession)
		var u *Unsplittable
		if !errors.As(err, &u) || u.Observer != c.o.Name || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an Unsplittable naming %s: %q", c.name, err, c.o.Name, c.want)
		}
	}
}

// A server setting whose work a session can be exempted from splits:
// the other group's sessions set the exemption, the observed group's
// nothing.
func TestSplitSessionsExempt(t *testing.T) {
	rules := SessionRules{PerSession: func(string) bool { return false }, Exempt: func(n, v string) map[string]string {
		if n == "log" && v == "ON" {
			return map[string]string{"log_off": "ON"}
		}
		return nil
	}}
	p, err := SplitSessions(Observer{Name: "o", Settings: map[string]string{"log": "ON", "file": "f"}}, rules)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"log_off": "ON"}; !maps.Equal(p.Unobserved, want) || len(p.Session) != 0 {
		t.Errorf("session %v, unobserved %v; want nothing, %v", p.Session, p.Unobserved, want)
	}
	if want := map[string]string{"log": "ON", "file": "f"}; !maps.Equal(p.Shared.Settings, want) {
		t.Errorf("shared %v; want %v", p.Shared.Settings, want)
	}
	if _, err := SplitSessions(Observer{Name: "n", Settings: map[string]string{"log": "OFF"}}, rules); err == nil {
		t.Error("a server setting with no exemption at its value split; want Unsplittable")
	}
}

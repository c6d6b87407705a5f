package observer

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// HeldSuffix ends the name of the part of an observer Split holds.
const HeldSuffix = "/held"

// Split divides o for alternation: held is what stays in force through a
// pair of runs (its preload, extensions, sink, the settings that take
// effect only at server start, and the off values of AlternateOff), and
// switched is what the runner turns on and off between the runs (the other
// settings, and EnableSQL and DisableSQL). startOnly says whether a
// setting takes effect only at server start; nil means none does. Which
// settings those are is the engine's knowledge, not the catalog's.
func Split(o Observer, startOnly func(name string) bool) (held, switched Observer) {
	held = Observer{Name: o.Name + HeldSuffix, Engine: o.Engine, Description: o.Description,
		Preload: o.Preload, Extensions: o.Extensions, Requires: o.Requires, Sink: o.Sink, Settings: map[string]string{}}
	switched = Observer{Name: o.Name, Engine: o.Engine, Description: o.Description,
		Events: o.Events, Settings: map[string]string{}, EnableSQL: o.EnableSQL, DisableSQL: o.DisableSQL}
	for name, v := range o.Settings {
		switch off, hasOff := o.AlternateOff[name]; {
		case startOnly != nil && startOnly(name):
			held.Settings[name] = v
		case hasOff:
			// Held at its off value; the switch sets v on top of it.
			held.Settings[name] = off
			switched.Settings[name] = v
		default:
			switched.Settings[name] = v
		}
	}
	return held, switched
}

// SessionPart is an observer divided for a split of session groups on
// one server: Shared is applied to the server, in force for both groups
// (its preload, extensions, sink, the settings no session can change,
// and the off values of AlternateOff; and o's event counter, which sees
// only the observed group's statements); Session are the settings each
// session of the observed group sets for itself, and Unobserved those
// each session of the other group sets to keep out of a shared part's
// work (MariaDB's sql_log_off under general_log). A session's settings
// no other session sees, and they end with it.
type SessionPart struct {
	Shared     Observer
	Session    map[string]string
	Unobserved map[string]string
}

// Unsplittable says why an observer has no part a session can switch.
type Unsplittable struct {
	Observer string
	Reason   string
}

func (e *Unsplittable) Error() string {
	return fmt.Sprintf("%s cannot be split between session groups: %s", e.Observer, e.Reason)
}

// SessionRules are an engine's knowledge of its settings' scope, from its
// documentation: PerSession says whether a session can set a setting for
// itself; Exempt, when not nil, gives for a server setting at a value the
// session settings that keep a session out of its work (nil: none).
type SessionRules struct {
	PerSession func(name string) bool
	Exempt     func(name, value string) map[string]string
}

// SplitSessions divides o for a split by the engine's rules. An observer
// switched by statements (EnableSQL), or with no setting a session can
// set or be exempted from, is *Unsplittable.
func SplitSessions(o Observer, rules SessionRules) (SessionPart, error) {
	if len(o.EnableSQL) > 0 || len(o.DisableSQL) > 0 {
		return SessionPart{}, &Unsplittable{o.Name, "it is switched by statements that change the whole server, not by settings"}
	}
	shared := Observer{Name: o.Name + HeldSuffix, Engine: o.Engine, Description: o.Description,
		Preload: o.Preload, Extensions: o.Extensions, Requires: o.Requires, Sink: o.Sink, Objects: o.Objects, Events: o.Events, Settings: map[string]string{}}
	session, unobserved := map[string]string{}, map[string]string{}
	for name, v := range o.Settings {
		if !rules.PerSession(name) {
			shared.Settings[name] = v
			if rules.Exempt != nil {
				maps.Copy(unobserved, rules.Exempt(name, v))
			}
			continue
		}
		session[name] = v
		if off, ok := o.AlternateOff[name]; ok {
			shared.Settings[name] = off
		}
	}
	if len(session) == 0 && len(unobserved) == 0 {
		what := "it has no settings"
		if len(o.Settings) > 0 {
			what = "none of its settings (" + strings.Join(o.SettingNames(), ", ") + ") can be set by a session for itself"
		}
		return SessionPart{}, &Unsplittable{o.Name, what}
	}
	return SessionPart{Shared: shared, Session: session, Unobserved: unobserved}, nil
}

// SharedWork names what of p's shared part does work in both groups
// alike, whose cost a split does not see: libraries preloaded,
// extensions, a sink, objects, and the shared settings (sorted); empty
// when there is none.
func (p SessionPart) SharedWork() []string {
	var parts []string
	for _, l := range p.Shared.Preload {
		parts = append(parts, "preload "+l)
	}
	for _, e := range p.Shared.Extensions {
		parts = append(parts, "extension "+e)
	}
	if p.Shared.Sink != nil {
		parts = append(parts, "sink "+p.Shared.Sink.Kind)
	}
	parts = append(parts, slices.Sorted(maps.Keys(p.Shared.Objects))...)
	for _, n := range p.Shared.SettingNames() {
		parts = append(parts, n+"="+p.Shared.Settings[n])
	}
	return parts
}

package observer

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// EngineRules are what an engine adds to the catalog's own rules. The
// engine registry (engine.Register) registers them with the engine, so
// that this package asks what an engine takes and never compares names.
type EngineRules struct {
	// AddOn is the engine's word for a loadable add-on ("extension",
	// "plugin"), as an observer's summary names its extensions.
	AddOn string
	// Sections are the catalog sections only this engine's observers are
	// written in (SQL Server's xe, trace, availability_group; each also
	// an events source where one counts events). An engine with sections
	// takes no settings, preload, extensions or sink.
	Sections []string
	// Check is the engine's own check of an observer, run when it is
	// parsed: rules this package does not know, such as which columns a
	// SQL Trace event carries.
	Check Check
}

// Check is an engine's own check of an observer. It returns the field at
// fault, so that the error points at its line.
type Check func(Observer) (field string, err error)

var (
	rulesMu sync.RWMutex
	rules   = map[string]EngineRules{}
)

// RegisterEngine makes r the rules of engine's observers.
func RegisterEngine(engine string, r EngineRules) {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	rules[engine] = r
}

// rulesOf are engine's rules, if it registered any. A binary without the
// engine (a test binary) checks its observers by this package's rules
// alone: it never looks them up.
func rulesOf(engine string) (EngineRules, bool) {
	rulesMu.RLock()
	defer rulesMu.RUnlock()
	r, ok := rules[engine]
	return r, ok
}

// ownersOf names the engines whose observers are written in section.
func ownersOf(section string) string {
	rulesMu.RLock()
	defer rulesMu.RUnlock()
	var out []string
	for name, r := range rules {
		if slices.Contains(r.Sections, section) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "no engine this binary has"
	}
	return "engine " + strings.Join(out, " or ")
}

// sectionLabels say what each engine-only section is, in errors.
var sectionLabels = []struct{ name, label string }{
	{"xe", "xe: (an Extended Events session)"},
	{"trace", "trace: (a SQL Trace)"},
	{"availability_group", "availability_group:"},
}

// sectionsOf are the engine-only sections o is written in.
func sectionsOf(o Observer) map[string]bool {
	return map[string]bool{"xe": o.XE != nil, "trace": o.Trace != nil, "availability_group": o.AvailabilityGroup != nil}
}

// validateSections checks that o's engine takes the engine-only sections
// o has, and, for an engine written in sections, that o has nothing else.
func validateSections(o Observer) (string, error) {
	r, known := rulesOf(o.Engine)
	if !known {
		return "", nil
	}
	has := sectionsOf(o)
	for _, s := range sectionLabels {
		if has[s.name] && !slices.Contains(r.Sections, s.name) {
			return s.name, fmt.Errorf("%s is for %s", s.label, ownersOf(s.name))
		}
	}
	if len(r.Sections) > 0 && (len(o.Settings) > 0 || len(o.Preload) > 0 || len(o.Extensions) > 0 || o.Sink != nil) {
		return "settings", fmt.Errorf("a %s observer is an %s: entry; settings, preload, extensions and sinks are not available",
			o.Engine, strings.Join(r.Sections[:len(r.Sections)-1], ":, ")+": or "+r.Sections[len(r.Sections)-1])
	}
	return "", nil
}

// validateSource checks that o's engine counts events from source, an
// engine-only section's.
func validateSource(o Observer, source string) (string, error) {
	if r, known := rulesOf(o.Engine); known && !slices.Contains(r.Sections, source) {
		return "events", fmt.Errorf("events source %s is for %s", source, ownersOf(source))
	}
	return "", nil
}

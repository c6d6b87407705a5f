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
	// written in, each decoded into the engine's own type (some also an
	// events source). An engine with sections takes no settings,
	// preload, extensions or sink.
	Sections []Section
	// Check is the engine's own check of an observer, run when it is
	// parsed, after its objects' own checks: rules this package does not
	// know, such as which columns a trace event carries.
	Check Check
}

// Check is an engine's own check of an observer. It returns the field at
// fault, so that the error points at its line.
type Check func(Observer) (field string, err error)

var (
	rulesMu sync.RWMutex
	rules   = map[string]EngineRules{}
)

// RegisterEngine makes r the rules of engine's observers. A section
// named like a field of an entry is a programming error.
func RegisterEngine(engine string, r EngineRules) {
	for _, s := range r.Sections {
		if entryFields()[s.Key] || s.New == nil {
			panic(fmt.Sprintf("observer: engine %s: section %q is a field of every entry, or has no type", engine, s.Key))
		}
	}
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

// has says whether the engine's observers are written in section key.
func (r EngineRules) has(key string) bool {
	return slices.ContainsFunc(r.Sections, func(s Section) bool { return s.Key == key })
}

// sectionKeys are the keys of r's sections, in order.
func (r EngineRules) sectionKeys() []string {
	keys := make([]string, len(r.Sections))
	for i, s := range r.Sections {
		keys[i] = s.Key
	}
	return keys
}

// registered are the registered engines' names, sorted.
func registered() []string {
	rulesMu.RLock()
	defer rulesMu.RUnlock()
	names := make([]string, 0, len(rules))
	for n := range rules {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// allSections are the registered engines' sections, each key once: by
// engine name, then in each engine's order.
func allSections() []Section {
	var out []Section
	for _, n := range registered() {
		r, _ := rulesOf(n)
		for _, s := range r.Sections {
			if !slices.ContainsFunc(out, func(o Section) bool { return o.Key == s.Key }) {
				out = append(out, s)
			}
		}
	}
	return out
}

// sectionFor is the section key of engine's observers, or, for an engine
// that has none of that key, the first registered engine's.
func sectionFor(engine, key string) (Section, bool) {
	r, _ := rulesOf(engine)
	for _, s := range slices.Concat(r.Sections, allSections()) {
		if s.Key == key {
			return s, true
		}
	}
	return Section{}, false
}

// engineSources are the registered engines' own events sources, the keys
// of their sections that are sources.
func engineSources() []string {
	var out []string
	for _, s := range allSections() {
		if s.EventsSource {
			out = append(out, s.Key)
		}
	}
	return out
}

// ownersOf names the engines whose observers are written in section.
func ownersOf(section string) string {
	var out []string
	for _, n := range registered() {
		if r, _ := rulesOf(n); r.has(section) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "no engine this binary has"
	}
	return "engine " + strings.Join(out, " or ")
}

// validateSections checks that o's engine takes the engine-only sections
// o has, and, for an engine written in sections, that o has nothing
// else; then that o's engine counts events from o's events source, if
// that is an engine's own.
func validateSections(o Observer) (string, error) {
	r, known := rulesOf(o.Engine)
	if !known {
		return "", nil
	}
	for _, s := range allSections() {
		if _, has := o.Objects[s.Key]; has && !r.has(s.Key) {
			return s.Key, fmt.Errorf("%s is for %s", s.Label, ownersOf(s.Key))
		}
	}
	if keys := r.sectionKeys(); len(keys) > 0 && (len(o.Settings) > 0 || len(o.Preload) > 0 || len(o.Extensions) > 0 || o.Sink != nil) {
		return "settings", fmt.Errorf("a %s observer is an %s entry; settings, preload, extensions and sinks are not available",
			o.Engine, orList(keys, ":"))
	}
	if ev := o.Events; ev != nil && slices.Contains(engineSources(), ev.Source) && !r.has(ev.Source) {
		return "events", fmt.Errorf("events source %s is for %s", ev.Source, ownersOf(ev.Source))
	}
	return "", nil
}

// orList is "a:, b: or c:" for keys a, b, c and suffix ":".
func orList(keys []string, suffix string) string {
	last := len(keys) - 1
	if last == 0 {
		return keys[0] + suffix
	}
	return strings.Join(keys[:last], suffix+", ") + suffix + " or " + keys[last] + suffix
}

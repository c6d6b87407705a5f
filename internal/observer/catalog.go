package observer

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// builtins are the engines' built-in catalogs by file name, as each
// engine registers its own (RegisterBuiltin).
var (
	builtinMu sync.Mutex
	builtins  = map[string][]byte{}
)

// RegisterBuiltin adds an engine's built-in catalog, name being its file
// as sources and errors cite it. Engines call it from init.
func RegisterBuiltin(name string, data []byte) {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	if _, ok := builtins[name]; ok {
		panic("observer: built-in catalog " + name + " registered twice")
	}
	builtins[name] = data
}

// Catalog is the set of known observers, keyed by engine and name.
type Catalog struct {
	byKey map[string]Observer // engine + "/" + name
	// engines are the engines an entry may name: the registry's, which
	// this package does not see (none: any name).
	engines []string
}

// UnknownError is returned for an observer name the catalog does not have.
type UnknownError struct {
	Engine, Name string
	Suggestion   string // closest known name, if any is close
	Known        []string
}

func (e *UnknownError) Error() string {
	msg := fmt.Sprintf("unknown observer %q for engine %s", e.Name, e.Engine)
	if e.Suggestion != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", e.Suggestion)
	}
	return msg + "; known: " + strings.Join(e.Known, ", ")
}

// Builtin returns the catalog shipped with obsbench: the catalogs of the
// engines this binary has, each registered by its engine. engines are the
// engines a user's file may name (the engine registry's names; none: any
// name).
func Builtin(engines ...string) (*Catalog, error) {
	c := &Catalog{byKey: map[string]Observer{}, engines: engines}
	builtinMu.Lock()
	names := slices.Sorted(maps.Keys(builtins))
	files := maps.Clone(builtins)
	builtinMu.Unlock()
	for _, name := range names {
		obs, err := Parse(name, files[name])
		if err != nil {
			return nil, fmt.Errorf("built-in catalog: %w", err)
		}
		if err := c.Add(obs...); err != nil {
			return nil, fmt.Errorf("built-in catalog: %w", err)
		}
	}
	return c, nil
}

// LoadFile parses a user's observer file and adds its entries to c.
func (c *Catalog) LoadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("observer file: %w", err)
	}
	obs, err := Parse(path, data, c.engines...)
	if err != nil {
		return err
	}
	return c.Add(obs...)
}

// Add puts observers into the catalog; a name already known for the same
// engine is an error, so a user file cannot silently replace a built-in.
func (c *Catalog) Add(obs ...Observer) error {
	for _, o := range obs {
		key := o.Engine + "/" + o.Name
		if prev, ok := c.byKey[key]; ok {
			return fmt.Errorf("%s: observer %q for engine %s is already defined at %s", o.Source, o.Name, o.Engine, prev.Source)
		}
		c.byKey[key] = o
	}
	return nil
}

// Lookup returns the observer called name for engine.
func (c *Catalog) Lookup(engine, name string) (Observer, error) {
	if o, ok := c.byKey[engine+"/"+name]; ok {
		return o, nil
	}
	known := c.Names(engine)
	return Observer{}, &UnknownError{Engine: engine, Name: name, Suggestion: ClosestName(name, known), Known: known}
}

// All returns engine's observers, baseline first, then by name.
func (c *Catalog) All(engine string) []Observer {
	var out []Observer
	for _, o := range c.byKey {
		if o.Engine == engine {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Name == Baseline) != (out[j].Name == Baseline) {
			return out[i].Name == Baseline
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Engines lists the engines c has observers for, sorted.
func (c *Catalog) Engines() []string {
	var out []string
	for _, o := range c.byKey {
		if !contains(out, o.Engine) {
			out = append(out, o.Engine)
		}
	}
	sort.Strings(out)
	return out
}

// Names lists engine's observer names in the order of All.
func (c *Catalog) Names(engine string) []string {
	var names []string
	for _, o := range c.All(engine) {
		names = append(names, o.Name)
	}
	return names
}

// Defaults returns the observers of engine's default experiment.
func (c *Catalog) Defaults(engine string) []Observer {
	var out []Observer
	for _, o := range c.All(engine) {
		if o.Default {
			out = append(out, o)
		}
	}
	return out
}

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	settingRE = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)
	libRE     = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
)

// IsSettingName says whether name is spelled as a catalog's setting is:
// a server setting's name, an extension's with a dot.
func IsSettingName(name string) bool { return settingRE.MatchString(name) }

// validate checks one entry, whose engine is one of engines (none: any);
// the returned error names the offending field so that the parser can
// point at its line.
func validate(o Observer, engines []string) (field string, err error) {
	switch {
	case !nameRE.MatchString(o.Name):
		return "name", fmt.Errorf("name %q must be lower-case letters, digits and dashes", o.Name)
	case o.Engine == "":
		return "engine", errors.New("engine is missing (the engine the observer is for)")
	case len(engines) > 0 && !contains(engines, o.Engine):
		return "engine", fmt.Errorf("engine %q is not one of %s", o.Engine, strings.Join(engines, ", "))
	case o.Description == "":
		return "description", errors.New("description is missing (one line saying what it records)")
	}
	for _, n := range o.SettingNames() {
		if !settingRE.MatchString(n) {
			return "settings", fmt.Errorf("setting name %q is not a server setting name", n)
		}
		if n == "shared_preload_libraries" {
			return "settings", errors.New("shared_preload_libraries is set with preload:, so observers can be combined")
		}
	}
	for _, l := range append(append([]string{}, o.Preload...), o.Extensions...) {
		if !libRE.MatchString(l) {
			return "preload", fmt.Errorf("library or extension name %q is not valid", l)
		}
	}
	for n := range o.AlternateOff {
		if _, ok := o.Settings[n]; !ok {
			return "alternate_off", fmt.Errorf("alternate_off names %s, which is not among the settings", n)
		}
	}
	if len(o.EnableSQL) > 0 && len(o.DisableSQL) == 0 {
		return "disable_sql", errors.New("enable_sql needs disable_sql: what undoes it")
	}
	for _, r := range o.Requires {
		if !libRE.MatchString(r.Library) || r.Package == "" {
			return "requires", fmt.Errorf("each requirement needs library: (a name like pgaudit) and package: (what installs it)")
		}
	}
	if field, err := validateSections(o); err != nil {
		return field, err
	}
	if field, err := checkObjects(o); err != nil {
		return field, err
	}
	if o.Sink != nil {
		if err := validateSink(o); err != nil {
			return "sink", err
		}
	}
	if o.Consumer != nil {
		if err := validateConsumer(*o.Consumer); err != nil {
			return "consumer", err
		}
	}
	if o.Poller != nil {
		if err := validatePoller(*o.Poller); err != nil {
			return "poller", err
		}
	}
	if r, _ := rulesOf(o.Engine); r.Check != nil {
		if field, err := r.Check(o); err != nil {
			return field, err
		}
	}
	if o.Events != nil {
		if err := validateEvents(o); err != nil {
			return "events", err
		}
	}
	return "", nil
}

// validateEvents checks how o's events are counted: each source's own
// fields, and no field of another source's.
func validateEvents(o Observer) error {
	ev := o.Events
	switch ev.Source {
	case SourceServerLog, SourceStream:
		if ev.Match == "" {
			return fmt.Errorf("events with source %s need match: (a regular expression)", ev.Source)
		}
		if _, err := ev.MatchOf("tag"); err != nil {
			return fmt.Errorf("events match: %w", err)
		}
	case SourceSQL:
		if ev.Query == "" {
			return errors.New("events with source sql need query: (returning one number)")
		}
		if (ev.Mark != "") != strings.Contains(ev.Query, MarkPlaceholder) {
			return fmt.Errorf("events mark: and %s in query: go together (the query counts what is newer than the mark)", MarkPlaceholder)
		}
	default:
		if err := validateEngineSource(o); err != nil {
			return err
		}
	}
	switch {
	case ev.Sampled < 0 || ev.Sampled >= 1:
		return fmt.Errorf("events sampled: %g: want the share of statements recorded, above 0 and below 1 (leave it out where every statement is)", ev.Sampled)
	case (ev.SampledBy == "") != (ev.Sampled == 0):
		return errors.New("events sampled: and sampled_by: go together: the share recorded and the setting that sets it")
	case ev.SampledBy != "" && !sampledByHolds(o):
		return fmt.Errorf("events sampled: %g is not what sampled_by: %s gives from the observer's settings", ev.Sampled, ev.SampledBy)
	case ev.Sampled > 0 && ev.Volume:
		return errors.New("events sampled: and volume: exclude each other: a volume is not compared with the statements")
	case ev.Volume && builtinSource(ev.Source):
		return fmt.Errorf("events volume: is for %s", volumeSources())
	case ev.Mark != "" && ev.Source != SourceSQL:
		return errors.New("events mark: is for source sql")
	case ev.FileSetting != "" && ev.Source != SourceServerLog:
		return errors.New("events file_setting: is for source server-log")
	case ev.FileSetting != "" && !settingRE.MatchString(ev.FileSetting):
		return fmt.Errorf("events file_setting %q is not a server setting name", ev.FileSetting)
	case ev.Source == SourceStream && (o.Sink == nil || o.Sink.Kind != SinkStream):
		return errors.New("events source stream counts what a stream sink delivered: it needs sink: {kind: stream}")
	}
	return nil
}

// builtinSource says source is one of this package's, not an engine's.
func builtinSource(source string) bool {
	return source == SourceServerLog || source == SourceStream || source == SourceSQL
}

// validateEngineSource checks that an events source not of this package
// is a registered engine's own (which engine takes it validateSections
// checked, what it needs the engine's checks). An engine this binary
// does not have may count from sources of its own.
func validateEngineSource(o Observer) error {
	sources := engineSources()
	if _, known := rulesOf(o.Engine); slices.Contains(sources, o.Events.Source) || !known {
		return nil
	}
	return fmt.Errorf("events source %q is not one of %s", o.Events.Source,
		strings.Join(append([]string{SourceServerLog, SourceStream, SourceSQL}, sources...), ", "))
}

// volumeSources are the sources whose events may be a volume: the
// engines' own.
func volumeSources() string {
	sources := engineSources()
	switch len(sources) {
	case 0:
		return "an engine's own sources, and this binary has none"
	case 1:
		return "source " + sources[0]
	}
	last := len(sources) - 1
	return "sources " + strings.Join(sources[:last], ", ") + " and " + sources[last]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

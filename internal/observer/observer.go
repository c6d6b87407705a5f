// Package observer describes observers: named, reversible changes to a
// server that collect diagnostics (statement logs, plan capture, audit
// trails, statistics extensions). Observers are data, kept in a catalog; the
// engine that applies them knows no observer by name.
package observer

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Baseline is the name of the empty observer: the server as it is.
const Baseline = "baseline"

// Observer is one catalog entry for one engine.
type Observer struct {
	Name        string `yaml:"name" json:"name"`
	Engine      string `yaml:"engine" json:"engine"`
	Description string `yaml:"description" json:"description"`
	// Default marks the observers of the default experiment.
	Default bool `yaml:"default" json:"default,omitempty"`
	// Preload lists libraries added to shared_preload_libraries (which needs
	// a restart) before anything else is applied.
	Preload []string `yaml:"preload" json:"preload,omitempty"`
	// Extensions are created after the preload and dropped on revert,
	// unless they already existed.
	Extensions []string `yaml:"extensions" json:"extensions,omitempty"`
	// Settings are server settings (name to value). Whether one needs a
	// restart or a reload is the engine's business, not the catalog's.
	Settings map[string]string `yaml:"settings" json:"settings,omitempty"`
	// AlternateOff gives, for settings whose server default still records
	// (pg_stat_statements.track defaults to top), the value they take in
	// alternation's off phases, so that off means off.
	AlternateOff map[string]string `yaml:"alternate_off" json:"alternate_off,omitempty"`
	// EnableSQL runs after the settings are in force, DisableSQL before
	// they are reverted: for observers that are switched by statements
	// rather than settings (obsbench's calibration observer).
	EnableSQL  []string `yaml:"enable_sql" json:"enable_sql,omitempty"`
	DisableSQL []string `yaml:"disable_sql" json:"disable_sql,omitempty"`
	// Requires names what must be installed, with the package that has it.
	Requires []Requirement `yaml:"requires" json:"requires,omitempty"`
	// Sink, if set, is the destination obsbench provides for the
	// observer's output (a managed server only).
	Sink *Sink `yaml:"sink" json:"sink,omitempty"`
	// Consumer, if set, is a process obsbench runs beside the server to
	// read what the observer makes (a managed server only).
	Consumer *Consumer `yaml:"consumer" json:"consumer,omitempty"`
	// Poller, if set, is a monitoring agent obsbench runs against the
	// server while the observer is on.
	Poller *Poller `yaml:"poller" json:"poller,omitempty"`
	// Objects are the entry's engine-owned sections (EngineRules.Sections),
	// each under its section's key in YAML and JSON: objects obsbench
	// creates, or settings of existing ones it switches, decoded into the
	// owning engine's types (objects.go).
	Objects Objects `yaml:"-" json:"-"`
	// Events says how to count the events the observer recorded; nil for
	// observers that record no events (or only samples). Events and
	// Source stay Observer's last fields: MarshalJSON writes the objects
	// before them.
	Events *EventCounter `yaml:"events" json:"events,omitempty"`

	// Source is where the entry was defined ("file:line").
	Source string `yaml:"-" json:"source,omitempty"`
}

// Requirement is a server library that must be installed.
type Requirement struct {
	// Library is a shared library in the server's library directory, without
	// its suffix (e.g. "pgaudit").
	Library string `yaml:"library" json:"library"`
	// Package installs it; "{{major}}" is replaced by the server's major
	// version (e.g. "postgresql-{{major}}-pgaudit").
	Package string `yaml:"package" json:"package"`
}

// Event counter sources that any engine may count from. An engine's own
// sources are the keys of its sections that are sources (Section.EventsSource):
// they count what the section's object recorded.
const (
	// SourceServerLog counts lines in the server's log files that the
	// observer wrote during the run and that match Match.
	SourceServerLog = "server-log"
	// SourceSQL runs Query before and after the run; the difference of the
	// single number it returns is the count.
	SourceSQL = "sql"
	// SourceStream counts lines matching Match that a stream sink's client
	// received during the run.
	SourceStream = "stream"
)

// EventCounter says how to count the events an observer recorded, so that
// they can be compared with the statements the driver executed. In Match and
// Query, "{{tag}}" stands for the workload's tag, a string in the text of
// every statement it runs.
type EventCounter struct {
	Source string `yaml:"source" json:"source"`
	Match  string `yaml:"match" json:"match,omitempty"`
	Query  string `yaml:"query" json:"query,omitempty"`
	// FileSetting names the server setting that holds the path of the
	// file the events go to (source server-log), for engines whose logs
	// are files rather than a directory (MariaDB's general_log_file).
	// Files rotated away from it count too.
	FileSetting string `yaml:"file_setting" json:"file_setting,omitempty"`
	// Mark, for source sql, is a query run when the run starts; its one
	// value replaces "{{mark}}" in Query, whose value at the end is then
	// the count itself, not a difference. For a ring buffer, where old
	// events are overwritten: the mark is a high-water mark of what was
	// there before the run.
	Mark string `yaml:"mark" json:"mark,omitempty"`
	// Lost is a query returning the engine's own counter of events it
	// could not record (MariaDB's Server_audit_writes_failed); its growth
	// over the run is reported beside the count.
	Lost string `yaml:"lost" json:"lost,omitempty"`
	// Volume says the events are not one per statement and carry no
	// statement text (lock events): every matching event the object
	// holds is counted, and the count is reported as the observer's
	// volume, never compared with the statements executed. An engine's
	// own sources only.
	Volume bool `yaml:"volume" json:"volume,omitempty"`
	// PreparedOnly says the count sees prepared statements' executions
	// only (MariaDB's statement/com/Execute in a summary that cannot tell
	// the workload's text statements from obsbench's own): a workload
	// that sends its statements as text (--query-mode simple) is not
	// counted, and the report says why.
	PreparedOnly bool `yaml:"prepared_only" json:"prepared_only,omitempty"`
	// Sampled is the share of statements the observer records by design
	// (a sample rate, 0 < Sampled < 1; 0: every one): the count is then
	// checked against the binomial interval around that share of the
	// statements executed, not against all of them.
	Sampled float64 `yaml:"sampled" json:"sampled,omitempty"`
	// SampledBy names the setting whose value is Sampled, or with "1/"
	// before it the setting whose value N makes it 1/N (MariaDB's
	// log_slow_rate_limit): a dose of that setting (--dose) moves the
	// share the count is checked against.
	SampledBy string `yaml:"sampled_by" json:"sampled_by,omitempty"`
}

// MarkPlaceholder stands for the value of an event counter's Mark query.
const MarkPlaceholder = "{{mark}}"

// tagPlaceholder stands for the workload's tag in Match and Query.
const tagPlaceholder = "{{tag}}"

// MatchOf is Match for the statements carrying tag: a record of one
// matches it.
func (c EventCounter) MatchOf(tag string) (*regexp.Regexp, error) {
	return regexp.Compile(strings.ReplaceAll(c.Match, tagPlaceholder, regexp.QuoteMeta(tag)))
}

// QueryOf is Query for the statements carrying tag.
func (c EventCounter) QueryOf(tag string) string {
	return strings.ReplaceAll(c.Query, tagPlaceholder, tag)
}

// PackageFor is the package that provides r for a server of major version
// major.
func (r Requirement) PackageFor(major string) string {
	return strings.ReplaceAll(r.Package, "{{major}}", major)
}

// SettingNames returns the names of o's settings, sorted.
func (o Observer) SettingNames() []string {
	names := make([]string, 0, len(o.Settings))
	for n := range o.Settings {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Summary is a one-line description of what o changes.
func (o Observer) Summary() string {
	var parts []string
	if len(o.Preload) > 0 {
		parts = append(parts, "preload "+strings.Join(o.Preload, ","))
	}
	for _, n := range o.SettingNames() {
		parts = append(parts, fmt.Sprintf("%s=%s", n, o.Settings[n]))
	}
	kind := "extension "
	if r, _ := rulesOf(o.Engine); r.AddOn != "" {
		kind = r.AddOn + " "
	}
	for _, e := range o.Extensions {
		parts = append(parts, kind+e)
	}
	parts = append(parts, o.EnableSQL...)
	for _, k := range o.objectKeys() {
		parts = append(parts, o.Objects[k].Summary())
	}
	if o.Sink != nil {
		parts = append(parts, "sink: "+o.Sink.String())
	}
	if o.Consumer != nil {
		parts = append(parts, "consumer: "+o.Consumer.String())
	}
	if o.Poller != nil {
		parts = append(parts, "poller: "+o.Poller.String())
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, " ")
}

// Names are the observers' names, in order.
func Names(obs []Observer) []string {
	names := make([]string, len(obs))
	for i, o := range obs {
		names[i] = o.Name
	}
	return names
}

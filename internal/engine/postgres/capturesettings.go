package postgres

// PostgreSQL's logs as a capture reads them (capture.Source): how each
// is recognised, and how it is read: its stderr log's log_line_prefix and
// its messages' language, as given or from the server.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
)

// howToLog is what makes PostgreSQL log its statements.
const howToLog = "log_statement=all or log_min_duration_statement=0"

// logSources are PostgreSQL's logs a capture reads: its csvlog and
// jsonlog, read as they are, and its stderr log, whose lines begin with
// log_line_prefix.
var logSources = []capture.Source{
	{Name: "csvlog", Ext: ".csv", Describe: "csvlog (*.csv)", Sniff: isCSV, Order: 10},
	{Name: "jsonlog", Ext: ".json", Describe: "jsonlog (*.json)", Sniff: isJSON, Order: 11},
	{Name: "stderr", Ext: ".log", Describe: `stderr log (lines with "LOG:  " after the log_line_prefix)`,
		Takes: capture.Takes{LinePrefix: true}, Sniff: hasSeverity, Fallback: true, Order: 12},
}

func init() {
	for i := range logSources {
		s := &logSources[i]
		s.Engine, s.Product, s.HowToLog = "postgres", "PostgreSQL", howToLog
		s.Takes.Server, s.Takes.Language = true, true
		name := s.Name
		s.Open = func(ctx context.Context, o capture.ReadOptions) (capture.Opened, error) { return openLog(ctx, name, o) }
		capture.Register(*s)
	}
}

// isJSON says whether line is a jsonlog line.
func isJSON(line string) bool {
	return strings.HasPrefix(line, "{") && strings.Contains(line, `"timestamp":`)
}

// isCSV says whether line is a csvlog line: log_time first,
// "2026-11-22 10:00:00.123 UTC,".
func isCSV(s string) bool {
	return len(s) > 24 && isDateTime(s[:19]) && s[19] == '.' && s[23] == ' ' && csvZone(s[24:])
}

// LogReader reads PostgreSQL's logs into a capture (capture.LogReader).
type LogReader struct {
	source string
	clock  pgClock
	stderr *stderrLog // a stderr log's state across files
	// msgs reads a log written in another language than English; nil
	// for English.
	msgs *Messages
	// unknown are the first messages of client sessions the reader did
	// not recognize, for GuessLanguages.
	unknown []string
}

// maxUnknown is how many unrecognized messages a reader keeps.
const maxUnknown = 32

// NewLogReader reads a log of source (csvlog, jsonlog, stderr); a stderr
// log's lines begin with prefix (nil: DefaultPrefix).
func NewLogReader(source string, prefix *Prefix) (*LogReader, error) {
	if !slices.ContainsFunc(logSources, func(s capture.Source) bool { return s.Name == source }) {
		return nil, fmt.Errorf("log source %q: not one of PostgreSQL's (csvlog, jsonlog, stderr)", source)
	}
	l := &LogReader{source: source}
	if source == "stderr" {
		if prefix == nil {
			prefix, _ = ParsePrefix(DefaultPrefix)
		}
		l.stderr = newStderrLog(prefix)
	}
	return l, nil
}

// Read reads one file of the log (capture.LogReader).
func (l *LogReader) Read(ctx context.Context, p *capture.Parser, r io.Reader, name string) error {
	switch l.source {
	case "csvlog":
		return l.readCSV(ctx, p, r, name)
	case "jsonlog":
		return l.readJSON(ctx, p, r, name)
	default:
		return l.readStderr(ctx, p, r, name)
	}
}

// SetMessages makes the reader read a log whose messages are in m's
// language (the server's lc_messages).
func (l *LogReader) SetMessages(m *Messages) {
	l.msgs = m
	if l.stderr != nil {
		l.stderr.prefix.msgs = m
	}
}

// Unrecognized are (up to 32 of) the LOG messages of client sessions
// that were not a statement, connection or disconnection. A log with no
// statement and such messages may be in another language than English.
func (l *LogReader) Unrecognized() []string { return l.unknown }

// NoStatementHint says whether the log's messages look like another
// language's (capture.Hinter).
func (l *LogReader) NoStatementHint() string { return languageHint(l.msgs, l.unknown) }

// openLog prepares the reading of a log of source: how its lines begin
// (a stderr log) and its messages' language, from o or the server o
// names.
func openLog(ctx context.Context, source string, o capture.ReadOptions) (capture.Opened, error) {
	settings, err := serverLogSettings(ctx, o.Server)
	if err != nil {
		return capture.Opened{}, err
	}
	var opened capture.Opened
	var prefix *Prefix
	if source == "stderr" {
		if prefix, opened.Notes, err = linePrefix(o.LinePrefix, settings); err != nil {
			return capture.Opened{}, err
		}
		opened.LinePrefix = prefix.String()
	}
	l, err := NewLogReader(source, prefix)
	if err != nil {
		return capture.Opened{}, err
	}
	msgs, note, err := messages(o.Language, settings)
	if err != nil {
		return capture.Opened{}, err
	}
	if note != "" {
		opened.Notes = append(opened.Notes, note)
	}
	l.SetMessages(msgs)
	opened.Reader = l
	return opened, nil
}

// serverLogSettings reads the log settings of the server at dsn, which
// say how its log is read (nil for no dsn).
func serverLogSettings(ctx context.Context, dsn string) (*LogSettings, error) {
	if dsn == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := ReadLogSettings(ctx, dsn)
	if err != nil {
		return nil, &capture.OptionError{Option: capture.ServerOption, Err: fmt.Errorf("reading the server's log settings: %w", err), Failed: true}
	}
	return &s, nil
}

// linePrefix is the log_line_prefix a stderr log is read with, and notes
// that say where it came from and what it cannot tell: given, or the
// server's settings s.
func linePrefix(given *string, s *LogSettings) (*Prefix, []string, error) {
	var text, from string
	var notes []string
	switch {
	case given != nil:
		text, from = *given, "as given"
	case s != nil:
		text, from = s.LinePrefix, "the server's"
		if !strings.Contains(s.Destination, "stderr") {
			notes = append(notes, fmt.Sprintf("the server's log_destination is %q, without stderr: its log_line_prefix is these logs' only if it has not changed since they were written", s.Destination))
		}
	default:
		text, from = DefaultPrefix, fmt.Sprintf("Debian's default, which also reads PostgreSQL's '%%m [%%p] ' (give %s or %s if the server has another)",
			capture.Flag(capture.LinePrefixOption), capture.Flag(capture.ServerOption))
	}
	p, err := ParsePrefix(text)
	if err != nil {
		return nil, nil, capture.InputError{Err: err}
	}
	notes = append([]string{fmt.Sprintf("the stderr log was read with log_line_prefix '%s', %s", text, from)}, notes...)
	for _, l := range p.Limits() {
		notes = append(notes, "log_line_prefix: "+l)
	}
	return p, notes, nil
}

// messages are the translations a log is read with: those of lang, or
// of the server's lc_messages; nil for English. The note says which
// catalog was used.
func messages(lang string, s *LogSettings) (*Messages, string, error) {
	const server = "the server's lc_messages"
	from := capture.Flag(capture.LanguageOption)
	if lang == "" && s != nil {
		lang, from = s.Messages, server
	}
	if english(lang) {
		return nil, "", nil
	}
	m, err := LoadMessages(lang, CatalogDirs)
	switch {
	case err != nil && from == server:
		return nil, "", capture.InputError{Err: fmt.Errorf("%s %q: %v", from, lang, err)}
	case err != nil:
		return nil, "", &capture.OptionError{Option: capture.LanguageOption, Err: fmt.Errorf("%q: %v", lang, err)}
	}
	note := fmt.Sprintf("the log's messages were read as %s (%s), with the translations of %s", lang, from, m.Catalog)
	if !m.ReadsConnections() {
		note += "; PostgreSQL writes this language's connection messages transliterated to ASCII (before a session has its database's encoding), which cannot be read back: sessions begin at their first statement, with the user and database of its log line, and the capture has no connect records"
	}
	return m, note, nil
}

// english says whether lc_messages lang is PostgreSQL's English
// (untranslated) messages.
func english(lang string) bool {
	l := strings.ToLower(lang)
	return l == "" || l == "c" || l == "posix" || strings.HasPrefix(l, "c.") || l == "en" || strings.HasPrefix(l, "en_") || strings.HasPrefix(l, "en.")
}

// languageHint says, for a capture that found no statement, whether the
// log's messages look like another language's.
func languageHint(m *Messages, unknown []string) string {
	if m != nil || len(unknown) == 0 {
		return ""
	}
	if langs := GuessLanguages(unknown, CatalogDirs); len(langs) > 0 {
		return fmt.Sprintf("; its messages look like %s (the server's lc_messages is not English): give %s %s, or %s",
			strings.Join(langs, " or "), capture.Flag(capture.LanguageOption), langs[0], capture.Flag(capture.ServerOption))
	}
	return fmt.Sprintf("; messages such as %q were not recognized: if the server's lc_messages is not English, give %s", unknown[0], capture.Flag(capture.LanguageOption))
}

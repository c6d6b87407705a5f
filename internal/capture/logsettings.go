package capture

// How a PostgreSQL log is read: its stderr log's log_line_prefix and its
// messages' language, from the flags or from the server --dsn names.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/spec"
)

// howToRead is how the logs are read: a stderr log's prefix (nil for
// other sources), the server's messages, and notes on both for the user.
func (o LogOptions) howToRead(settings *postgres.LogSettings, src string) (prefix *Prefix, msgs *Messages, notes []string, err error) {
	if src == "stderr" {
		if prefix, notes, err = o.prefix(settings); err != nil {
			return nil, nil, nil, err
		}
	}
	msgs, note, err := o.messages(settings)
	if err != nil {
		return nil, nil, nil, err
	}
	if note != "" {
		notes = append(notes, note)
	}
	return prefix, msgs, notes, nil
}

// logSettings reads the log settings of the server --dsn names, which say
// how its PostgreSQL log is read (nil without --dsn), after checking that
// the flags that say how a log is read fit the log's source.
func (o LogOptions) logSettings(ctx context.Context, src string, files []string) (*postgres.LogSettings, error) {
	switch {
	case !PostgreSQLLog(src) && (o.PrefixDSN != "" || o.LogLanguage != ""):
		return nil, spec.Invalidf("--dsn and --log-language say how a PostgreSQL log is read; %s is %s", strings.Join(files, ", "), src)
	case src != "stderr" && o.LogLinePrefix != nil:
		return nil, spec.Invalidf("--log-line-prefix says how PostgreSQL's stderr log is read; %s is %s", strings.Join(files, ", "), src)
	case o.PrefixDSN == "":
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := postgres.ReadLogSettings(ctx, o.PrefixDSN)
	if err != nil {
		return nil, fmt.Errorf("--dsn: reading the server's log settings: %w", err)
	}
	return &s, nil
}

// prefix is the log_line_prefix a stderr log is read with, and notes
// that say where it came from and what it cannot tell; s are the
// server's settings when --dsn was given.
func (o LogOptions) prefix(s *postgres.LogSettings) (*Prefix, []string, error) {
	var text, from string
	var notes []string
	switch {
	case o.LogLinePrefix != nil:
		text, from = *o.LogLinePrefix, "as given"
	case s != nil:
		text, from = s.LinePrefix, "the server's"
		if !strings.Contains(s.Destination, "stderr") {
			notes = append(notes, fmt.Sprintf("the server's log_destination is %q, without stderr: its log_line_prefix is these logs' only if it has not changed since they were written", s.Destination))
		}
	default:
		text, from = DefaultPrefix, "Debian's default, which also reads PostgreSQL's '%m [%p] ' (give --log-line-prefix or --dsn if the server has another)"
	}
	p, err := ParsePrefix(text)
	if err != nil {
		return nil, nil, spec.InvalidError{Err: err}
	}
	notes = append([]string{fmt.Sprintf("the stderr log was read with log_line_prefix '%s', %s", text, from)}, notes...)
	for _, l := range p.Limits() {
		notes = append(notes, "log_line_prefix: "+l)
	}
	return p, notes, nil
}

// messages are the translations a PostgreSQL log is read with: those of
// --log-language, or of the server's lc_messages (--dsn); nil for
// English. The note says which catalog was used.
func (o LogOptions) messages(s *postgres.LogSettings) (*Messages, string, error) {
	lang, from := o.LogLanguage, "--log-language"
	if lang == "" && s != nil {
		lang, from = s.Messages, "the server's lc_messages"
	}
	if english(lang) {
		return nil, "", nil
	}
	m, err := LoadMessages(lang, CatalogDirs)
	if err != nil {
		return nil, "", spec.Invalidf("%s %q: %v", from, lang, err)
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
		return fmt.Sprintf("; its messages look like %s (the server's lc_messages is not English): give --log-language %s, or --dsn",
			strings.Join(langs, " or "), langs[0])
	}
	return fmt.Sprintf("; messages such as %q were not recognized: if the server's lc_messages is not English, give --log-language", unknown[0])
}

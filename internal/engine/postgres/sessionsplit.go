package postgres

import (
	"maps"
	"regexp"
	"sort"
	"strings"

	"github.com/obsbench/obsbench/internal/observer"
)

// sessionContexts are the contexts (pg_settings.context) of the settings
// the catalog's observers use, as PostgreSQL 15's documentation gives
// them: "user" settings any session may SET, "superuser" ones a session
// of a superuser (or of a role granted SET on them) may; "sighup" and
// "postmaster" ones only the server's configuration changes. From
// runtime-config-logging.html ("Only superusers and users with the
// appropriate SET privilege can change this setting" for log_statement,
// log_min_duration_statement, log_duration, log_lock_waits; "This
// parameter can only be set in the postgresql.conf file or on the server
// command line" for log_destination, log_directory, log_filename,
// log_rotation_size, log_line_prefix), runtime-config-statistics.html
// (track_io_timing, track_functions, compute_query_id: superuser),
// runtime-config-wal.html (synchronous_commit: user), auto-explain.html
// ("Only superusers can change these settings"), pgstatstatements.html
// (track: superuser; max: server start; save: configuration file) and
// pgaudit's README (its settings: superuser). A setting not listed is
// taken as the server's own (shared by both groups), which is safe: a
// split then only under-reads. TestSessionContexts checks every entry
// against a server's pg_settings with the libraries loaded.
var sessionContexts = map[string]string{
	"synchronous_commit":                 "user",
	"log_statement":                      "superuser",
	"log_min_duration_statement":         "superuser",
	"log_duration":                       "superuser",
	"log_lock_waits":                     "superuser",
	"log_min_messages":                   "superuser",
	"log_parameter_max_length":           "superuser",
	"track_io_timing":                    "superuser",
	"track_functions":                    "superuser",
	"compute_query_id":                   "superuser",
	"log_destination":                    "sighup",
	"log_directory":                      "sighup",
	"log_filename":                       "sighup",
	"log_rotation_size":                  "sighup",
	"log_line_prefix":                    "sighup",
	"logging_collector":                  "postmaster",
	"shared_preload_libraries":           "postmaster",
	"auto_explain.log_min_duration":      "superuser",
	"auto_explain.log_analyze":           "superuser",
	"auto_explain.log_timing":            "superuser",
	"auto_explain.log_buffers":           "superuser",
	"auto_explain.log_format":            "superuser",
	"auto_explain.log_nested_statements": "superuser",
	"auto_explain.sample_rate":           "superuser",
	"pg_stat_statements.track":           "superuser",
	"pg_stat_statements.track_utility":   "superuser",
	"pg_stat_statements.max":             "postmaster",
	"pg_stat_statements.save":            "sighup",
	"pgaudit.log":                        "superuser",
	"pgaudit.log_catalog":                "superuser",
	"pgaudit.log_level":                  "superuser",
	"pgaudit.log_parameter":              "superuser",
	"pgaudit.log_relation":               "superuser",
	"pgaudit.log_statement_once":         "superuser",
	"pgaudit.role":                       "superuser",
}

// SessionContexts are the documented contexts SplitSessions goes by (a
// copy), for the test that checks them against a server.
func SessionContexts() map[string]string {
	return maps.Clone(sessionContexts)
}

// perSession says whether a session can SET name for itself: obsbench's
// sessions log in as a superuser on a managed server, and must on an
// external one for a split (the role is checked when the sessions SET).
func perSession(name string) bool {
	c := sessionContexts[name]
	return c == "user" || c == "superuser"
}

// SplitSessions divides o for --method split (engine.SessionSplitter):
// what a session can SET for itself is the observed group's, the rest
// the server's, in force for both groups.
func (Engine) SplitSessions(o observer.Observer) (observer.SessionPart, error) {
	return observer.SplitSessions(o, observer.SessionRules{PerSession: perSession})
}

var settingNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$`)

// SessionSQL are the SET statements of settings, in name order. A name
// that is not a setting's name is left out: SplitSessions only gives the
// documented ones.
func (Engine) SessionSQL(settings map[string]string) []string {
	names := make([]string, 0, len(settings))
	for n := range settings {
		if settingNameRE.MatchString(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	stmts := make([]string, len(names))
	for i, n := range names {
		stmts[i] = "SET " + n + " TO '" + strings.ReplaceAll(settings[n], "'", "''") + "'"
	}
	return stmts
}

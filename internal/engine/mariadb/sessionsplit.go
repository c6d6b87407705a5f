package mariadb

import (
	"maps"
	"regexp"
	"sort"
	"strings"

	"github.com/obsbench/obsbench/internal/observer"
)

// Scopes of a variable, as information_schema.SYSTEM_VARIABLES gives
// them: GLOBAL only the server's, SESSION the server's default and each
// session's own, SESSION ONLY each session's alone.
const (
	scopeGlobal      = "GLOBAL"
	scopeSession     = "SESSION"
	scopeSessionOnly = "SESSION ONLY"
)

// variableScopes are the scopes of the variables the catalog's observers
// use, and of the ones a split sets, as MariaDB 10.11's documentation
// gives them (server-system-variables: "Scope: Global" for general_log,
// general_log_file, log_output, slow_query_log_file, sync_binlog,
// performance_schema and its sizes; "Scope: Global, Session" for
// long_query_time, log_slow_verbosity, slow_query_log, sql_log_off;
// innodb-system-variables for innodb_flush_log_at_trx_commit;
// semisynchronous-replication and mariadb-audit-plugin-options for
// rpl_semi_sync_master_enabled and server_audit_*: Global). A variable
// not listed is taken as the server's own, which is safe: a split then
// only under-reads. TestVariableScopes checks every entry against a
// server's SYSTEM_VARIABLES, with server_audit installed.
var variableScopes = map[string]string{
	"general_log":                    scopeGlobal,
	"general_log_file":               scopeGlobal,
	"log_output":                     scopeGlobal,
	"slow_query_log":                 scopeSession,
	"slow_query_log_file":            scopeGlobal,
	"long_query_time":                scopeSession,
	"log_slow_verbosity":             scopeSession,
	"sql_log_off":                    scopeSession,
	"sync_binlog":                    scopeGlobal,
	"innodb_flush_log_at_trx_commit": scopeGlobal,
	"performance_schema":             scopeGlobal,
	"performance_schema_events_statements_history_long_size": scopeGlobal,
	"rpl_semi_sync_master_enabled":                           scopeGlobal,
	"server_audit_events":                                    scopeGlobal,
	"server_audit_output_type":                               scopeGlobal,
	"server_audit_file_path":                                 scopeGlobal,
	"server_audit_file_rotate_size":                          scopeGlobal,
	"server_audit_file_rotations":                            scopeGlobal,
	"server_audit_incl_users":                                scopeGlobal,
	"server_audit_excl_users":                                scopeGlobal,
	"server_audit_logging":                                   scopeGlobal,
}

// VariableScopes are the documented scopes SplitSessions goes by (a
// copy), for the test that checks them against a server.
func VariableScopes() map[string]string {
	return maps.Clone(variableScopes)
}

// exemptions are the session settings that keep one session out of a
// server-wide log. The general log skips a connection whose sql_log_off
// is set, which takes SUPER (overview-of-mariadb-logs); the slow log one
// whose slow_query_log is OFF, while the global value must be ON for any
// session to log (slow_query_log: "Must be enabled to activate other
// slow log options"; per connection since 10.1).
var exemptions = map[string]map[string]string{
	"general_log":    {"sql_log_off": "ON"},
	"slow_query_log": {"slow_query_log": "OFF"},
}

// perSession says whether a session can set name for itself and thereby
// take up the observer's work: a session variable, other than a
// server-wide switch that a session can only opt out of. obsbench's
// sessions log in as root on a managed server; on an external one the
// user needs the privileges the SET statements need (SUPER for
// sql_log_off).
func perSession(name string) bool {
	if _, ok := exemptions[name]; ok {
		return false
	}
	s := variableScopes[name]
	return s == scopeSession || s == scopeSessionOnly
}

// exempt is what a session of the other group sets to stay out of the
// work a server-wide setting starts; nil when it cannot.
func exempt(name, value string) map[string]string {
	if !on(value) {
		return nil
	}
	return exemptions[name]
}

func on(v string) bool {
	return strings.EqualFold(v, "ON") || v == "1"
}

// SplitSessions divides o for --method split (engine.SessionSplitter):
// the session variables are the observed group's, the global ones the
// server's, and a global log the other group's sessions opt out of.
func (Engine) SplitSessions(o observer.Observer) (observer.SessionPart, error) {
	return observer.SplitSessions(o, observer.SessionRules{PerSession: perSession, Exempt: exempt})
}

var variableNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// SessionSQL are the SET SESSION statements of settings, in name order,
// their values as SET GLOBAL's (setSQL). A name that is not a variable's
// name is left out.
func (Engine) SessionSQL(settings map[string]string) []string {
	names := make([]string, 0, len(settings))
	for n := range settings {
		if variableNameRE.MatchString(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	stmts := make([]string, len(names))
	for i, n := range names {
		stmts[i] = setSQL("SESSION", n, settings[n])
	}
	return stmts
}

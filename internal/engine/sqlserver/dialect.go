package sqlserver

import (
	"regexp"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
)

// The workloads write their SQL once, in the form PostgreSQL and MariaDB
// share ($1 parameters, LIMIT, CREATE TABLE IF NOT EXISTS, BEGIN). The few
// forms T-SQL spells differently are rewritten here; a workload whose SQL
// needs more (functions, EXTRACT) is marked as not running on sqlserver.
var (
	paramRE  = regexp.MustCompile(`\$([0-9]+)`)
	limitRE  = regexp.MustCompile(`(?is)^\s*SELECT\s+(.*?)\s+LIMIT\s+([0-9]+)(\s*/\*.*\*/)?\s*$`)
	createRE = regexp.MustCompile(`(?is)^\s*CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS\s+([A-Za-z0-9_]+)\s*(\(.*)$`)
)

// Translate rewrites one statement of a workload in T-SQL:
//   - $1, $2 become @p1, @p2 (go-mssqldb's ordinal parameter names);
//   - SELECT ... LIMIT n becomes SELECT TOP (n) ...;
//   - CREATE TABLE IF NOT EXISTS t (...) becomes
//     IF OBJECT_ID(N't', N'U') IS NULL CREATE TABLE t (...);
//   - BEGIN becomes BEGIN TRANSACTION; COMMIT and END (PostgreSQL's
//     synonym) become COMMIT TRANSACTION.
//
// A leading comment (a user's script's tag, /* obsbench-pgbench */) is
// kept in front of the translated statement.
func Translate(sql string) string {
	if comment, rest := engine.LeadingComment(sql); comment != "" {
		return comment + Translate(rest)
	}
	switch strings.ToUpper(strings.TrimSpace(sql)) {
	case "BEGIN":
		return "BEGIN TRANSACTION"
	case "COMMIT", "END": // END is PostgreSQL's COMMIT (pgbench's built-in scripts)
		return "COMMIT TRANSACTION"
	}
	if m := createRE.FindStringSubmatch(sql); m != nil {
		sql = "IF OBJECT_ID(N'" + m[1] + "', N'U') IS NULL CREATE TABLE " + m[1] + " " + m[2]
	}
	if m := limitRE.FindStringSubmatch(sql); m != nil {
		sql = "SELECT TOP (" + m[2] + ") " + m[1] + m[3]
	}
	return paramRE.ReplaceAllString(sql, "@p$1")
}

package mariadb

import (
	"regexp"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
)

var (
	// placeholders are numbered parameters; workload SQL uses them in
	// order and has no $ elsewhere.
	placeholders = regexp.MustCompile(`\$[0-9]+`)
	// endRE is PostgreSQL's END [ WORK | TRANSACTION ] [ AND [ NO ] CHAIN ]
	// (https://www.postgresql.org/docs/15/sql-end.html), which MariaDB
	// does not have.
	endRE = regexp.MustCompile(`(?is)^\s*END(\s+(?:WORK|TRANSACTION))?(\s+AND(?:\s+NO)?\s+CHAIN)?\s*;?\s*$`)
)

// Translate rewrites one statement of a workload for MariaDB:
//   - $1, $2 become ?, taken in order (workloads write PostgreSQL's
//     numbered form, which says which argument goes where);
//   - END, PostgreSQL's synonym of COMMIT that pgbench's built-in scripts
//     end their transactions with, becomes COMMIT, keeping AND [NO] CHAIN:
//     MariaDB's COMMIT [WORK] [AND [NO] CHAIN]
//     (https://mariadb.com/kb/en/commit/) has the same meaning.
//
// A leading comment (a script's tag, /* obsbench-pgbench */) stays in
// front.
func Translate(sql string) string {
	if comment, rest := engine.LeadingComment(sql); comment != "" {
		return comment + Translate(rest)
	}
	if m := endRE.FindStringSubmatch(sql); m != nil {
		return "COMMIT" + chain(m[2])
	}
	return placeholders.ReplaceAllString(sql, "?")
}

// chain is " AND CHAIN" or " AND NO CHAIN" as written, or nothing.
func chain(s string) string {
	f := strings.Fields(strings.ToUpper(s))
	if len(f) == 0 {
		return ""
	}
	return " " + strings.Join(f, " ")
}

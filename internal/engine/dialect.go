package engine

import "regexp"

var leadingCommentRE = regexp.MustCompile(`^\s*/\*.*?\*/\s*`)

// LeadingComment splits a statement into its leading comment (a user's
// script's tag, /* obsbench-pgbench */, with the space around it) and the
// statement after it; comment is "" when there is none. The engines'
// dialects rewrite the statement and keep the comment in front.
func LeadingComment(sql string) (comment, rest string) {
	m := leadingCommentRE.FindString(sql)
	return m, sql[len(m):]
}

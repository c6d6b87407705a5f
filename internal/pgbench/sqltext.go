package pgbench

import (
	"strconv"
	"strings"
)

// pendingSQL gathers lines of SQL into statements, each numbered by the
// line it starts on.
type pendingSQL struct {
	text strings.Builder // SQL not yet ended by ';'
	line int             // the line text starts on; 0: none yet
}

// add adds line lineNo and emits each statement it ends.
func (p *pendingSQL) add(line string, lineNo int, emit func(stmt string, line int)) {
	if p.line == 0 && !blank(line) {
		p.line = lineNo
	}
	p.text.WriteString(line + "\n")
	stmts, rest := splitStatements(p.text.String())
	for _, st := range stmts {
		emit(st, p.line)
		p.line = lineNo // a further statement on this line
	}
	p.text.Reset()
	p.text.WriteString(rest)
	if blank(rest) {
		p.line = 0
	}
}

// flush emits what is pending as a statement, ';' or not, and empties it.
func (p *pendingSQL) flush(emit func(stmt string, line int)) {
	if !blank(p.text.String()) {
		emit(p.text.String(), p.line)
	}
	p.text.Reset()
	p.line = 0
}

// splitStatements cuts complete statements (ended by ';' outside quotes,
// dollar quotes and comments) off text; rest is what is not yet ended.
// Comments are kept in the statements, as pgbench sends them.
func splitStatements(text string) (stmts []string, rest string) {
	start := 0
	for i := 0; i < len(text); i++ {
		if j := skipLiteral(text, i); j != i {
			i = j
			continue
		}
		switch c := text[i]; {
		case c == ';':
			if st := strings.TrimSpace(text[start:i]); !blank(st) {
				stmts = append(stmts, st)
			}
			start = i + 1
		}
	}
	if start > len(text) {
		start = len(text)
	}
	return stmts, text[start:]
}

// skipLiteral is where a quoted name or string, a comment or a
// dollar-quoted string that starts at i ends (its last byte, or len(s)
// for one never ended); i where none starts.
func skipLiteral(s string, i int) int {
	switch c := s[i]; {
	case c == '\'' || c == '"':
		return skipQuoted(s, i, c)
	case c == '-' && strings.HasPrefix(s[i:], "--"):
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(s)
	case c == '/' && strings.HasPrefix(s[i:], "/*"):
		return skipBlockComment(s, i)
	case c == '$':
		return skipDollar(s, i)
	}
	return i
}

func skipQuoted(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q { // a doubled quote
				j++
				continue
			}
			return j
		}
	}
	return len(s)
}

func skipBlockComment(s string, i int) int {
	depth := 0
	for j := i; j < len(s)-1; j++ {
		switch s[j : j+2] {
		case "/*":
			depth++
			j++
		case "*/":
			depth--
			j++
			if depth == 0 {
				return j
			}
		}
	}
	return len(s)
}

// skipDollar skips a dollar-quoted string ($$...$$ or $tag$...$tag$)
// starting at i; a $ that starts none ($1) is left as it is.
func skipDollar(s string, i int) int {
	j := i + 1
	for j < len(s) && (isAlnum(s[j]) && !(j == i+1 && isDigit(s[j]))) {
		j++
	}
	if j >= len(s) || s[j] != '$' {
		return i
	}
	tag := s[i : j+1]
	if k := strings.Index(s[j+1:], tag); k >= 0 {
		return j + 1 + k + len(tag) - 1
	}
	return len(s)
}

// metaStart is where, at or after from, a backslash outside quotes and
// comments starts a meta-command in text (SQL and then "\gset" on one
// line), or -1.
func metaStart(text string, from int) int {
	for i := 0; i < len(text); i++ {
		if j := skipLiteral(text, i); j != i {
			i = j
			continue
		}
		if text[i] == '\\' && i >= from {
			return i
		}
	}
	return -1
}

// blank says whether s holds nothing but spaces and comments.
func blank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == '-' && strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return true
			}
			i += j
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			i = skipBlockComment(s, i)
		default:
			return false
		}
	}
	return true
}

// placeholders replaces each :variable of a statement by $1, $2, ..., a
// number per occurrence (a variable used twice is sent twice), as pgbench
// -M prepared does (parseQuery): parameters numbered in order translate to
// MariaDB's positional ?. Unlike pgbench, quotes and comments are left
// alone; "::" (a cast) is too.
func placeholders(stmt string) (string, []string) {
	var b strings.Builder
	var params []string
	for i := 0; i < len(stmt); i++ {
		c := stmt[i]
		switch {
		case c == '\'' || c == '"':
			j := skipQuoted(stmt, i, c)
			b.WriteString(stmt[i:min(j+1, len(stmt))])
			i = j
			continue
		case c == '-' && strings.HasPrefix(stmt[i:], "--"):
			j := strings.IndexByte(stmt[i:], '\n')
			if j < 0 {
				j = len(stmt) - i
			}
			b.WriteString(stmt[i : i+j])
			i += j - 1
			continue
		case c == ':' && i+1 < len(stmt) && stmt[i+1] == ':':
			b.WriteString("::")
			i++
			continue
		case c == ':' && i+1 < len(stmt) && isAlpha(stmt[i+1]):
			j := i + 1
			for j < len(stmt) && isAlnum(stmt[j]) {
				j++
			}
			name := stmt[i+1 : j]
			params = append(params, name)
			b.WriteString("$" + strconv.Itoa(len(params)))
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), params
}

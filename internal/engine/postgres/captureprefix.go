package postgres

import (
	"fmt"
	"strings"
)

// Prefix is a PostgreSQL log_line_prefix, compiled to read the lines of a
// stderr-format log back: which escape gives what, and where each ends.
//
// The rules follow log_line_prefix() in PostgreSQL's
// src/backend/utils/error/elog.c and the log_line_prefix entry of the
// documentation (runtime-config-logging): "%%" is a percent sign; a
// number between % and the letter pads the value with spaces to that
// width (negative: on the right); %q ends the prefix of a line from a
// process with no client session (postmaster, checkpointer...); an
// unknown escape, or a % at the end, prints nothing. Values of a session
// that is not known yet print as "[unknown]" (%u, %d, %a) and those of a
// process with no client session as nothing (%u, %d, %a, %r, %h, %i, %v).
type Prefix struct {
	text  string
	items []prefixItem
	msgs  *Messages // the log's language, if not English
	// stop is the index of the first %q in items, or -1: a line of a
	// process with no client session ends its prefix there.
	stop int
	// has says which escapes the prefix holds.
	has map[byte]bool
}

type prefixItem struct {
	lit    string // literal text, if esc is 0
	esc    byte
	padded bool
}

// DefaultPrefix is the prefix a capture assumes when it is told none:
// Debian's and Ubuntu's packaged default. It also reads PostgreSQL's own
// default, '%m [%p] ', whose lines are those of a process with no client
// session in Debian's (nothing after %q).
const DefaultPrefix = "%m [%p] %q%u@%d "

// ParsePrefix compiles a log_line_prefix as the server reads it.
func ParsePrefix(s string) (*Prefix, error) {
	p := &Prefix{text: s, stop: -1, has: map[byte]bool{}}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			p.items = append(p.items, prefixItem{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit.WriteByte(s[i])
			continue
		}
		i++
		if i == len(s) {
			break // a % at the end: PostgreSQL ignores it
		}
		if s[i] == '%' {
			lit.WriteByte('%')
			continue
		}
		padded := false
		if s[i] == '-' || s[i] >= '0' && s[i] <= '9' {
			j := i
			if s[j] == '-' {
				j++
			}
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == len(s) {
				break // PostgreSQL stops at a padding with no letter
			}
			padded = s[i:j] != "0" && s[i:j] != "-0" && s[i:j] != "-"
			i = j
		}
		c := s[i]
		if !strings.ContainsRune(prefixEscapes, rune(c)) {
			continue // PostgreSQL prints nothing for an unknown escape
		}
		flush()
		if c == 'q' {
			if p.stop < 0 {
				p.stop = len(p.items)
			}
			continue
		}
		p.items = append(p.items, prefixItem{esc: c, padded: padded})
		p.has[c] = true
	}
	flush()
	for i := 1; i < len(p.items); i++ {
		a, b := p.items[i-1], p.items[i]
		if a.esc != 0 && b.esc != 0 && !shaped(a) && !shaped(b) {
			return nil, fmt.Errorf("log_line_prefix %q: %%%c and %%%c with nothing between them cannot be told apart in a line", s, a.esc, b.esc)
		}
	}
	return p, nil
}

// prefixEscapes are the escapes PostgreSQL 15 (and 16's %L) knows.
const prefixEscapes = "aubdrhLpPtmnQiecslvxq"

// String is the prefix as the server has it.
func (p *Prefix) String() string { return p.text }

// Limits say, one sentence each, what a capture from logs with this
// prefix cannot tell, so that a user can decide to change it.
func (p *Prefix) Limits() []string {
	var out []string
	switch {
	case !p.has['c'] && !p.has['p']:
		out = append(out, "it has no session id (%c) or process id (%p): sessions cannot be told apart, so every statement is captured in one session, which a replay runs on one connection in the log's order (the original concurrency is lost)")
	case !p.has['c']:
		out = append(out, "it has a process id (%p) but no session id (%c): sessions are told apart by process id, ended by log_disconnections' lines; without them, two sessions of a process id the system reused are captured as one")
	}
	switch {
	case !p.has['m'] && !p.has['n'] && !p.has['t']:
		out = append(out, "it has no time (%m, %n or %t): every statement is at the capture's start, so a replay at the original pace runs them back to back")
	case !p.has['m'] && !p.has['n']:
		out = append(out, "its time is to the second (%t; %m or %n have milliseconds): a replay at the original pace keeps the pace to the second")
	}
	var from []string
	for _, e := range []struct {
		c    byte
		name string
	}{{'u', "user (%u)"}, {'d', "database (%d)"}, {'a', "application (%a)"}} {
		if !p.has[e.c] {
			from = append(from, e.name)
		}
	}
	if len(from) > 0 {
		out = append(out, fmt.Sprintf("it has no %s: a session's come from its log_connections line, and a session without one in the logs has none (filters on them see an empty value)", strings.Join(from, ", ")))
	}
	return out
}

// shaped says whether an item's value has a form its end can be found by
// (digits, a time), rather than text that ends where the next literal
// begins.
func shaped(it prefixItem) bool {
	return !it.padded && strings.IndexByte("mtsnplcx", it.esc) >= 0
}

// match reads line's prefix and the severity after it ("LOG:  "). It
// returns the escapes' values, the severity and the rest of the line.
func (p *Prefix) match(line string, vals map[byte]string) (severity, rest string, ok bool) {
	clear(vals)
	if sev, rest, ok := p.matchItems(p.items, line, 0, vals); ok {
		return sev, rest, true
	}
	if p.stop >= 0 {
		clear(vals)
		return p.matchItems(p.items[:p.stop], line, 0, vals)
	}
	return "", "", false
}

// matchItems matches items at line[pos:], then the severity.
func (p *Prefix) matchItems(items []prefixItem, line string, pos int, vals map[byte]string) (severity, rest string, ok bool) {
	if len(items) == 0 {
		return p.splitSeverity(line[pos:])
	}
	it := items[0]
	if it.esc == 0 {
		if !strings.HasPrefix(line[pos:], it.lit) {
			return "", "", false
		}
		return p.matchItems(items[1:], line, pos+len(it.lit), vals)
	}
	if shaped(it) {
		n := shapeLen(it.esc, line[pos:])
		if n < 0 {
			return "", "", false
		}
		vals[it.esc] = line[pos : pos+n]
		return p.matchItems(items[1:], line, pos+n, vals)
	}
	// Free text: it ends where what follows matches, the shortest first.
	for end := pos; end <= len(line); end++ {
		if len(items) > 1 && items[1].esc == 0 {
			k := strings.Index(line[end:], items[1].lit)
			if k < 0 {
				return "", "", false
			}
			end += k
		}
		if sev, rest, ok := p.matchItems(items[1:], line, end, vals); ok {
			vals[it.esc] = strings.TrimSpace(line[pos:end])
			return sev, rest, true
		}
	}
	return "", "", false
}

// splitSeverity reads "SEVERITY:  message" (with log_error_verbosity =
// verbose, "SEVERITY:  SQLSTATE: message").
// A translated severity (a server whose lc_messages is not English) is
// read when the parser has the language's Messages.
func (p *Prefix) splitSeverity(s string) (severity, rest string, ok bool) {
	i := 0
	for i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
		i++
	}
	if !severities[s[:i]] || !strings.HasPrefix(s[i:], ":  ") {
		i = -1
		for t := range p.msgs.severitiesOf() {
			if strings.HasPrefix(s, t) && strings.HasPrefix(s[len(t):], ":  ") {
				i = len(t)
				break
			}
		}
		if i < 0 {
			return "", "", false
		}
	}
	rest = s[i+3:]
	if len(rest) >= 7 && rest[5] == ':' && rest[6] == ' ' && sqlstate(rest[:5]) {
		rest = rest[7:]
	}
	return s[:i], rest, true
}

func sqlstate(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// shapeLen is the length of the value of escape c at the start of s, or
// -1 if s does not start with one.
func shapeLen(c byte, s string) int {
	switch c {
	case 'p', 'l', 'x':
		return digitsLen(s)
	case 'n': // 1732269600.123
		n := digitsLen(s)
		if n < 0 || len(s) < n+4 || s[n] != '.' || !digits(s[n+1:n+4]) {
			return -1
		}
		return n + 4
	case 'c': // hex start time "." hex pid
		n := hexLen(s)
		if n < 0 || n >= len(s) || s[n] != '.' {
			return -1
		}
		m := hexLen(s[n+1:])
		if m < 0 {
			return -1
		}
		return n + 1 + m
	case 'm', 't', 's': // 2026-11-22 10:00:00[.123] ZONE
		if len(s) < 21 || !isDateTime(s[:19]) {
			return -1
		}
		n := 19
		if c == 'm' {
			if len(s) < 25 || s[19] != '.' || !digits(s[20:23]) {
				return -1
			}
			n = 23
		}
		if s[n] != ' ' {
			return -1
		}
		// The zone's abbreviation: "UTC", "CET", "+03", "-0330".
		z := n + 1
		for z < len(s) && (s[z] >= 'A' && s[z] <= 'Z' || s[z] >= 'a' && s[z] <= 'z' || s[z] >= '0' && s[z] <= '9' || s[z] == '+' || s[z] == '-') {
			z++
		}
		if z == n+1 {
			return -1
		}
		return z
	}
	return -1
}

func digitsLen(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 {
		return -1
	}
	return n
}

func hexLen(s string) int {
	n := 0
	for n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] >= 'a' && s[n] <= 'f') {
		n++
	}
	if n == 0 {
		return -1
	}
	return n
}

// isDateTime says whether s is "YYYY-MM-DD HH:MM:SS".
func isDateTime(s string) bool {
	return len(s) == 19 && digits(s[:4]) && s[4] == '-' && digits(s[5:7]) && s[7] == '-' && digits(s[8:10]) &&
		s[10] == ' ' && digits(s[11:13]) && s[13] == ':' && digits(s[14:16]) && s[16] == ':' && digits(s[17:19])
}

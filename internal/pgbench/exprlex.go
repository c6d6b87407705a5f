package pgbench

import (
	"fmt"
	"strconv"
	"strings"
)

// The tokens of an expression (src/bin/pgbench/exprscan.l).
type tokKind int

const (
	tEOF         tokKind = iota
	tInt                 // an integer constant
	tMaxIntPlus1         // 9223372036854775808: valid only after a unary minus
	tDouble
	tVar  // :name
	tFunc // a name that is not a keyword: a function, if '(' follows
	tOp   // + - * / % ( ) , < > = & | # ~ <> != <= >= << >>
	tKeyword
)

type token struct {
	kind tokKind
	text string // the operator or keyword (lower case), the name
	i    int64
	f    float64
	pos  int // byte offset in the expression
}

var keywords = map[string]bool{"and": true, "or": true, "not": true, "is": true, "isnull": true, "notnull": true,
	"null": true, "true": true, "false": true, "case": true, "when": true, "then": true, "else": true, "end": true}

// SyntaxError is an expression or script that pgbench would refuse to
// load, with where (Col is a byte offset in the expression, 0-based).
type SyntaxError struct {
	Msg  string
	More string // the token or name at fault, as pgbench adds it
	Col  int
}

func (e *SyntaxError) Error() string {
	if e.More != "" {
		return fmt.Sprintf("%s (%s) at column %d", e.Msg, e.More, e.Col+1)
	}
	return fmt.Sprintf("%s at column %d", e.Msg, e.Col+1)
}

func isAlpha(c byte) bool { return c == '_' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }

// lex splits an expression into tokens.
func lex(s string) ([]token, error) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\n':
			i++
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n': // line continuation
			i += 2
		case c == ':' && i+1 < len(s) && isAlnum(s[i+1]):
			j := i + 1
			for j < len(s) && isAlnum(s[j]) {
				j++
			}
			out = append(out, token{kind: tVar, text: s[i+1 : j], pos: i})
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
			tok, n, err := lexNumber(s[i:])
			if err != nil {
				err.Col = i
				return nil, err
			}
			tok.pos = i
			out = append(out, tok)
			i += n
		case isAlpha(c):
			j := i
			for j < len(s) && isAlnum(s[j]) {
				j++
			}
			word := s[i:j]
			if lw := strings.ToLower(word); keywords[lw] {
				out = append(out, token{kind: tKeyword, text: lw, pos: i})
			} else {
				out = append(out, token{kind: tFunc, text: word, pos: i})
			}
			i = j
		default:
			op := ""
			if i+1 < len(s) {
				switch two := s[i : i+2]; two {
				case "<>", "!=", "<=", ">=", "<<", ">>":
					op = two
				}
			}
			if op == "" && strings.IndexByte("+-*/%(),<>=&|#~", c) >= 0 {
				op = string(c)
			}
			if op == "" {
				return nil, &SyntaxError{Msg: "unexpected character", More: string(c), Col: i}
			}
			if op == "!=" {
				op = "<>"
			}
			out = append(out, token{kind: tOp, text: op, pos: i})
			i += len(op)
		}
	}
	return append(out, token{kind: tEOF, pos: len(s)}), nil
}

// lexNumber reads an integer ({digit}+) or a double
// ({digit}+(.{digit}*)?([eE][-+]?{digit}+)? or .{digit}+...), the longest
// match, as flex does.
func lexNumber(s string) (token, int, *SyntaxError) {
	j := 0
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	intEnd := j
	double := false
	if j < len(s) && s[j] == '.' {
		double = true
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			double, j = true, k
		}
	}
	if double {
		f, _ := strconv.ParseFloat(s[:j], 64) // atof: out of range gives ±Inf
		return token{kind: tDouble, f: f}, j, nil
	}
	text := s[:intEnd]
	if strings.TrimLeft(text, "0") == "9223372036854775808" {
		return token{kind: tMaxIntPlus1, text: text}, intEnd, nil
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return token{}, 0, &SyntaxError{Msg: "bigint constant overflow", More: text}
	}
	return token{kind: tInt, i: v, text: text}, intEnd, nil
}

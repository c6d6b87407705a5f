package pgbench

import (
	"math"
	"strings"
)

// Expr is a parsed expression of \set, \if or \elif.
type Expr struct {
	root node
	text string
}

// node is one node of an expression: a constant, a variable or a function
// (operators are functions, as in pgbench).
type node interface{}

type constNode struct{ v Value }

type varNode struct{ name string }

type funcNode struct {
	fn   *function
	args []node
}

// function is one entry of pgbench's PGBENCH_FUNCTIONS.
type function struct {
	name string
	// nargs: the exact count; nargsVariable (least, greatest: 1 or more),
	// nargsCase, nargsHash (1 or 2: a default seed is added), nargsPermute
	// (2 or 3, likewise).
	nargs int
}

const (
	nargsVariable = -1
	nargsCase     = -2
	nargsHash     = -3
	nargsPermute  = -4
)

var functions = map[string]*function{}

func init() {
	for _, f := range []function{
		{"+", 2}, {"-", 2}, {"*", 2}, {"/", 2}, {"mod", 2},
		{"abs", 1}, {"least", nargsVariable}, {"greatest", nargsVariable}, {"debug", 1}, {"pi", 0},
		{"sqrt", 1}, {"ln", 1}, {"exp", 1}, {"int", 1}, {"double", 1},
		{"random", 2}, {"random_gaussian", 3}, {"random_exponential", 3}, {"random_zipfian", 3},
		{"pow", 2}, {"power", 2},
		{"!and", 2}, {"!or", 2}, {"!not", 1},
		{"&", 2}, {"|", 2}, {"#", 2}, {"<<", 2}, {">>", 2},
		{"=", 2}, {"<>", 2}, {"<=", 2}, {"<", 2}, {"!is", 2},
		{"!case_end", nargsCase},
		{"hash", nargsHash}, {"hash_murmur2", nargsHash}, {"hash_fnv1a", nargsHash},
		{"permute", nargsPermute},
	} {
		f := f
		functions[f.name] = &f
	}
	functions["power"].name = "pow" // the same function
}

// Precedence levels, lowest first (exprparse.y, taken from PostgreSQL's
// SQL grammar).
const (
	levelOr = 1 + iota
	levelAnd
	levelNot
	levelIs // IS, ISNULL, NOTNULL: non-associative
	levelCmp
	levelBit // | # & << >>: left
	levelAdd
	levelMul
	levelUnary
)

var binaryLevel = map[string]int{
	"or": levelOr, "and": levelAnd,
	"<": levelCmp, ">": levelCmp, "=": levelCmp, "<=": levelCmp, ">=": levelCmp, "<>": levelCmp,
	"|": levelBit, "#": levelBit, "&": levelBit, "<<": levelBit, ">>": levelBit,
	"+": levelAdd, "-": levelAdd, "*": levelMul, "/": levelMul, "%": levelMul,
}

type parser struct {
	toks []token
	i    int
}

// ParseExpr parses one expression as pgbench's \set does.
func ParseExpr(s string) (*Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	root, err := p.expr(levelOr)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.syntax(t)
	}
	return &Expr{root: root, text: s}, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) syntax(t token) error {
	return &SyntaxError{Msg: "syntax error", Col: t.pos}
}

// op is the binary operator token t stands for, if any.
func op(t token) (string, bool) {
	switch t.kind {
	case tOp:
		_, ok := binaryLevel[t.text]
		return t.text, ok
	case tKeyword:
		if t.text == "and" || t.text == "or" {
			return t.text, true
		}
	}
	return "", false
}

func (p *parser) expr(min int) (node, error) {
	left, err := p.prefix()
	if err != nil {
		return nil, err
	}
	lastLevel := 0 // for the non-associative levels
	for {
		t := p.peek()
		if t.kind == tKeyword && (t.text == "is" || t.text == "isnull" || t.text == "notnull") {
			if levelIs < min {
				return left, nil
			}
			if lastLevel == levelIs {
				return nil, p.syntax(t)
			}
			if left, err = p.isTest(left); err != nil {
				return nil, err
			}
			lastLevel = levelIs
			continue
		}
		o, ok := op(t)
		if !ok {
			return left, nil
		}
		level := binaryLevel[o]
		if level < min {
			return left, nil
		}
		if level == levelCmp && lastLevel == levelCmp {
			return nil, p.syntax(t)
		}
		p.next()
		right, err := p.expr(level + 1)
		if err != nil {
			return nil, err
		}
		left = binary(o, left, right)
		lastLevel = level
	}
}

// binary builds an operator as pgbench does: > and >= swap their operands.
func binary(o string, l, r node) node {
	switch o {
	case ">":
		return call("<", r, l)
	case ">=":
		return call("<=", r, l)
	case "%":
		return call("mod", l, r)
	case "and":
		return call("!and", l, r)
	case "or":
		return call("!or", l, r)
	}
	return call(o, l, r)
}

func call(name string, args ...node) node { return &funcNode{fn: functions[name], args: args} }

// isTest reads IS [NOT] NULL|TRUE|FALSE, ISNULL or NOTNULL after left.
func (p *parser) isTest(left node) (node, error) {
	t := p.next()
	null := &constNode{Value{Kind: Null}}
	switch t.text {
	case "isnull":
		return call("!is", left, null), nil
	case "notnull":
		return call("!not", call("!is", left, null)), nil
	}
	not := false
	if n := p.peek(); n.kind == tKeyword && n.text == "not" {
		not = true
		p.next()
	}
	w := p.next()
	var test node
	switch {
	case w.kind == tKeyword && w.text == "null":
		test = call("!is", left, null)
	case w.kind == tKeyword && (w.text == "true" || w.text == "false"):
		test = call("!is", left, &constNode{Value{Kind: Bool, B: w.text == "true"}})
	default:
		return nil, p.syntax(w)
	}
	if not {
		test = call("!not", test)
	}
	return test, nil
}

func (p *parser) prefix() (node, error) {
	t := p.next()
	switch t.kind {
	case tInt:
		return &constNode{Value{Kind: Int, I: t.i}}, nil
	case tMaxIntPlus1:
		return nil, &SyntaxError{Msg: "bigint constant overflow", More: t.text, Col: t.pos}
	case tDouble:
		return &constNode{Value{Kind: Double, F: t.f}}, nil
	case tVar:
		return &varNode{t.text}, nil
	case tFunc:
		return p.function(t)
	case tKeyword:
		switch t.text {
		case "null":
			return &constNode{Value{Kind: Null}}, nil
		case "true", "false":
			return &constNode{Value{Kind: Bool, B: t.text == "true"}}, nil
		case "not":
			e, err := p.expr(levelNot)
			if err != nil {
				return nil, err
			}
			return call("!not", e), nil
		case "case":
			return p.caseExpr()
		}
	case tOp:
		switch t.text {
		case "(":
			e, err := p.expr(levelOr)
			if err != nil {
				return nil, err
			}
			if c := p.next(); c.kind != tOp || c.text != ")" {
				return nil, p.syntax(c)
			}
			return e, nil
		case "+":
			return p.expr(levelUnary)
		case "-":
			// "-9223372036854775808" is the one way to write INT64_MIN.
			if n := p.peek(); n.kind == tMaxIntPlus1 {
				p.next()
				return &constNode{Value{Kind: Int, I: math.MinInt64}}, nil
			}
			e, err := p.expr(levelUnary)
			if err != nil {
				return nil, err
			}
			return call("-", &constNode{Value{Kind: Int}}, e), nil
		case "~":
			// ~x is all ones XOR x; it binds as the bitwise operators do.
			e, err := p.expr(levelBit + 1)
			if err != nil {
				return nil, err
			}
			return call("#", &constNode{Value{Kind: Int, I: -1}}, e), nil
		}
	}
	return nil, p.syntax(t)
}

func (p *parser) function(name token) (node, error) {
	f, ok := functions[strings.ToLower(name.text)]
	if !ok || strings.HasPrefix(f.name, "!") {
		return nil, &SyntaxError{Msg: "unexpected function name", More: name.text, Col: name.pos}
	}
	if t := p.next(); t.kind != tOp || t.text != "(" {
		return nil, p.syntax(t)
	}
	var args []node
	if t := p.peek(); !(t.kind == tOp && t.text == ")") {
		for {
			a, err := p.expr(levelOr)
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if t := p.peek(); t.kind == tOp && t.text == "," {
				p.next()
				continue
			}
			break
		}
	}
	if t := p.next(); t.kind != tOp || t.text != ")" {
		return nil, p.syntax(t)
	}
	n := len(args)
	bad := func(msg string) error { return &SyntaxError{Msg: msg, More: f.name, Col: name.pos} }
	switch f.nargs {
	case nargsVariable:
		if n == 0 {
			return nil, bad("at least one argument expected")
		}
	case nargsHash:
		if n < 1 || n > 2 {
			return nil, bad("unexpected number of arguments")
		}
		if n == 1 {
			args = append(args, &varNode{"default_seed"})
		}
	case nargsPermute:
		if n < 2 || n > 3 {
			return nil, bad("unexpected number of arguments")
		}
		if n == 2 {
			args = append(args, &varNode{"default_seed"})
		}
	default:
		if n != f.nargs {
			return nil, bad("unexpected number of arguments")
		}
	}
	return &funcNode{fn: f, args: args}, nil
}

// caseExpr reads WHEN c THEN v ... [ELSE e] END after CASE: arguments
// c1, v1, c2, v2, ..., e (NULL without ELSE).
func (p *parser) caseExpr() (node, error) {
	var args []node
	for {
		t := p.next()
		if t.kind != tKeyword {
			return nil, p.syntax(t)
		}
		switch t.text {
		case "when":
			if len(args)%2 != 0 {
				return nil, p.syntax(t)
			}
			c, err := p.expr(levelOr)
			if err != nil {
				return nil, err
			}
			if th := p.next(); th.kind != tKeyword || th.text != "then" {
				return nil, p.syntax(th)
			}
			v, err := p.expr(levelOr)
			if err != nil {
				return nil, err
			}
			args = append(args, c, v)
		case "else", "end":
			if len(args) == 0 {
				return nil, p.syntax(t)
			}
			var e node = &constNode{Value{Kind: Null}}
			if t.text == "else" {
				var err error
				if e, err = p.expr(levelOr); err != nil {
					return nil, err
				}
				if end := p.next(); end.kind != tKeyword || end.text != "end" {
					return nil, p.syntax(end)
				}
			}
			return &funcNode{fn: functions["!case_end"], args: append(args, e)}, nil
		default:
			return nil, p.syntax(t)
		}
	}
}

package pgbench

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a value: pgbench's PGBT_NULL, _BOOLEAN, _INT,
// _DOUBLE.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Int
	Double
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "int", "double"}[k]
}

// Value is one value of the language.
type Value struct {
	Kind Kind
	B    bool
	I    int64
	F    float64
}

// String is the value as a variable's text, as it goes into a statement
// (pgbench's getVariable: %.15g for doubles).
func (v Value) String() string {
	switch v.Kind {
	case Bool:
		return strconv.FormatBool(v.B)
	case Int:
		return strconv.FormatInt(v.I, 10)
	case Double:
		return formatDouble(v.F)
	}
	return "NULL"
}

// Debug is the value as debug() prints it.
func (v Value) Debug() string {
	switch v.Kind {
	case Bool:
		return "boolean " + strconv.FormatBool(v.B)
	case Int:
		return "int " + strconv.FormatInt(v.I, 10)
	case Double:
		return "double " + formatDouble(v.F)
	}
	return "null"
}

// formatDouble is "%.15g" (DBL_DIG digits) as PostgreSQL's own snprintf
// writes it: infinities and NaN spelled as in SQL.
func formatDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', 15, 64)
}

// ParseValue reads a variable's text as pgbench's makeVariableValue does:
// null, a boolean word (prefixes of true, yes, false, no; on, off), an
// integer, or a double.
func ParseValue(s string) (Value, error) {
	l := strings.ToLower(s)
	switch {
	case l == "":
		return Value{}, errors.New("empty value")
	case l == "null":
		return Value{Kind: Null}, nil
	case strings.HasPrefix("true", l) || strings.HasPrefix("yes", l) || l == "on":
		return Value{Kind: Bool, B: true}, nil
	case strings.HasPrefix("false", l) || strings.HasPrefix("no", l) || l == "off" || l == "of":
		return Value{Kind: Bool}, nil
	}
	t := strings.TrimSpace(s)
	if t != "" && strings.Trim(strings.TrimLeft(t, "+-"), "0123456789") == "" && len(strings.TrimLeft(t, "+-")) > 0 && len(t)-len(strings.TrimLeft(t, "+-")) <= 1 {
		i, err := strconv.ParseInt(strings.TrimPrefix(t, "+"), 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("value %q is out of range for type bigint", s)
		}
		return Value{Kind: Int, I: i}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Value{}, fmt.Errorf("malformed variable value %q", s)
	}
	return Value{Kind: Double, F: f}, nil
}

// Env is what evaluation needs: the client's variables, its random
// stream, and where debug() writes.
type Env struct {
	Vars  map[string]string // a variable's text (as set by \set, -D, \gset)
	Rand  *PRNG
	Debug func(Value)
}

// EvalError is an error of evaluation, as pgbench reports it (the
// client's transaction fails).
type EvalError struct{ Msg string }

func (e *EvalError) Error() string { return e.Msg }

func evalErr(format string, a ...any) error { return &EvalError{Msg: fmt.Sprintf(format, a...)} }

// Eval evaluates e in env.
func (e *Expr) Eval(env *Env) (Value, error) { return eval(e.root, env) }

func eval(n node, env *Env) (Value, error) {
	switch n := n.(type) {
	case *constNode:
		return n.v, nil
	case *varNode:
		s, ok := env.Vars[n.name]
		if !ok {
			return Value{}, evalErr("undefined variable %q", n.name)
		}
		v, err := ParseValue(s)
		if err != nil {
			return Value{}, evalErr("malformed variable %q value: %q", n.name, s)
		}
		return v, nil
	case *funcNode:
		switch n.fn.name {
		case "!and", "!or", "!case_end":
			return evalLazy(n.fn.name, n.args, env)
		}
		args := make([]Value, len(n.args))
		hasNull := false
		for i, a := range n.args {
			v, err := eval(a, env)
			if err != nil {
				return Value{}, err
			}
			args[i] = v
			hasNull = hasNull || v.Kind == Null
		}
		if hasNull && n.fn.name != "!is" && n.fn.name != "debug" {
			return Value{Kind: Null}, nil
		}
		return evalFunc(n.fn.name, args, env)
	}
	return Value{}, errors.New("pgbench: unknown expression node")
}

func toBool(v Value) (bool, error) {
	if v.Kind != Bool {
		return false, evalErr("cannot coerce %s to boolean", v.Kind)
	}
	return v.B, nil
}

// truth is a CASE condition's truth: non-zero numbers are true, NULL false.
func truth(v Value) bool {
	switch v.Kind {
	case Bool:
		return v.B
	case Int:
		return v.I != 0
	case Double:
		return v.F != 0
	}
	return false
}

func toInt(v Value) (int64, error) {
	switch v.Kind {
	case Int:
		return v.I, nil
	case Double:
		d := math.RoundToEven(v.F) // rint
		if math.IsNaN(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0 {
			return 0, evalErr("double to int overflow for %f", d)
		}
		return int64(d), nil
	}
	return 0, evalErr("cannot coerce %s to int", v.Kind)
}

func toDouble(v Value) (float64, error) {
	switch v.Kind {
	case Double:
		return v.F, nil
	case Int:
		return float64(v.I), nil
	}
	return 0, evalErr("cannot coerce %s to double", v.Kind)
}

// pair converts two operands with to, the first error winning.
func pair[T any](a, b Value, to func(Value) (T, error)) (l, r T, err error) {
	if l, err = to(a); err != nil {
		return l, r, err
	}
	r, err = to(b)
	return l, r, err
}

func evalLazy(fn string, args []node, env *Env) (Value, error) {
	a1, err := eval(args[0], env)
	if err != nil {
		return Value{}, err
	}
	switch fn {
	case "!case_end":
		if truth(a1) {
			return eval(args[1], env)
		}
		if len(args) == 3 { // the else part
			return eval(args[2], env)
		}
		return evalLazy(fn, args[2:], env)
	}
	if a1.Kind == Null {
		return Value{Kind: Null}, nil
	}
	b1, err := toBool(a1)
	if err != nil {
		return Value{}, err
	}
	if (fn == "!and" && !b1) || (fn == "!or" && b1) {
		return Value{Kind: Bool, B: b1}, nil
	}
	a2, err := eval(args[1], env)
	if err != nil || a2.Kind == Null {
		return Value{Kind: Null}, err
	}
	b2, err := toBool(a2)
	return Value{Kind: Bool, B: b2}, err
}

// Limits of the random functions' parameter (pgbench.h).
const (
	minGaussianParam = 2.0
	minZipfianParam  = 1.001
	maxZipfianParam  = 1000.0
)

func evalFunc(fn string, a []Value, env *Env) (Value, error) {
	switch fn {
	case "+", "-", "*", "/", "mod", "=", "<>", "<=", "<":
		return arith(fn, a[0], a[1])
	case "&", "|", "#", "<<", ">>":
		return bitwise(fn, a[0], a[1])
	case "!not":
		b, err := toBool(a[0])
		return Value{Kind: Bool, B: !b}, err
	case "!is":
		// As pgbench: the same kind, and the same first byte of the value
		// (the test is only ever against NULL, TRUE or FALSE).
		same := a[0].Kind == a[1].Kind
		if same && a[0].Kind == Bool {
			same = a[0].B == a[1].B
		}
		return Value{Kind: Bool, B: same}, nil
	case "pi", "abs", "double", "sqrt", "ln", "exp", "int", "pow":
		return numeric(fn, a)
	case "debug":
		if env.Debug != nil {
			env.Debug(a[0])
		}
		return a[0], nil
	case "least", "greatest":
		return extremum(fn == "least", a)
	case "random", "random_gaussian", "random_exponential", "random_zipfian":
		return random(fn, a, env)
	case "hash", "hash_murmur2", "hash_fnv1a":
		v, seed, err := pair(a[0], a[1], toInt)
		if err != nil {
			return Value{}, err
		}
		if fn == "hash_fnv1a" {
			return Value{Kind: Int, I: HashFNV1a(v, uint64(seed))}, nil
		}
		return Value{Kind: Int, I: HashMurmur2(v, uint64(seed))}, nil
	case "permute":
		return permute(a)
	}
	return Value{}, fmt.Errorf("pgbench: function %s has no evaluation", fn)
}

// bitwise is the integer operators on bits.
func bitwise(fn string, lv, rv Value) (Value, error) {
	l, r, err := pair(lv, rv, toInt)
	if err != nil {
		return Value{}, err
	}
	var v int64
	switch fn {
	case "&":
		v = l & r
	case "|":
		v = l | r
	case "#":
		v = l ^ r
	case "<<":
		v = l << (uint64(r) & 63) // C leaves larger shifts undefined; x86 masks them
	case ">>":
		v = l >> (uint64(r) & 63)
	}
	return Value{Kind: Int, I: v}, nil
}

// numeric is the functions of numbers: pi, abs, conversions, roots,
// logarithms and powers.
func numeric(fn string, a []Value) (Value, error) {
	switch fn {
	case "pi":
		return Value{Kind: Double, F: math.Pi}, nil
	case "abs":
		if a[0].Kind == Int {
			i := a[0].I
			if i < 0 {
				i = -i
			}
			return Value{Kind: Int, I: i}, nil
		}
		// pgbench reads any other kind as a double (booleans included).
		return Value{Kind: Double, F: math.Abs(a[0].F)}, nil
	case "int":
		i, err := toInt(a[0])
		return Value{Kind: Int, I: i}, err
	case "pow":
		l, r, err := pair(a[0], a[1], toDouble)
		return Value{Kind: Double, F: math.Pow(l, r)}, err
	}
	d, err := toDouble(a[0])
	switch fn {
	case "sqrt":
		d = math.Sqrt(d)
	case "ln":
		d = math.Log(d)
	case "exp":
		d = math.Exp(d)
	}
	return Value{Kind: Double, F: d}, err
}

// permute is permute(i, size, seed).
func permute(a []Value) (Value, error) {
	var x [3]int64
	for i := range x {
		var err error
		if x[i], err = toInt(a[i]); err != nil {
			return Value{}, err
		}
	}
	if x[1] <= 0 {
		return Value{}, evalErr("permute size parameter must be greater than zero")
	}
	return Value{Kind: Int, I: Permute(x[0], x[1], x[2])}, nil
}

// arith is the overloaded operators: double if either side is (except
// for %), else 64-bit integers with overflow errors.
func arith(fn string, lv, rv Value) (Value, error) {
	if (lv.Kind == Double || rv.Kind == Double) && fn != "mod" {
		l, r, err := pair(lv, rv, toDouble)
		if err != nil {
			return Value{}, err
		}
		if v, ok := comparison(fn, l, r); ok {
			return v, nil
		}
		switch fn {
		case "+":
			return Value{Kind: Double, F: l + r}, nil
		case "-":
			return Value{Kind: Double, F: l - r}, nil
		case "*":
			return Value{Kind: Double, F: l * r}, nil
		default: // "/"
			return Value{Kind: Double, F: l / r}, nil
		}
	}
	l, r, err := pair(lv, rv, toInt)
	if err != nil {
		return Value{}, err
	}
	switch fn {
	case "+":
		s := l + r
		if (s > l) != (r > 0) {
			return Value{}, evalErr("bigint add out of range")
		}
		return Value{Kind: Int, I: s}, nil
	case "-":
		s := l - r
		if (s < l) != (r > 0) {
			return Value{}, evalErr("bigint sub out of range")
		}
		return Value{Kind: Int, I: s}, nil
	case "*":
		p := l * r
		if l != 0 && (p/l != r || (l == -1 && r == math.MinInt64)) {
			return Value{}, evalErr("bigint mul out of range")
		}
		return Value{Kind: Int, I: p}, nil
	}
	if v, ok := comparison(fn, l, r); ok {
		return v, nil
	}
	// "/" and "mod"
	if r == 0 {
		return Value{}, evalErr("division by zero")
	}
	if r == -1 {
		if fn == "mod" {
			return Value{Kind: Int}, nil
		}
		if l == math.MinInt64 {
			return Value{}, evalErr("bigint div out of range")
		}
		return Value{Kind: Int, I: -l}, nil
	}
	if fn == "mod" {
		return Value{Kind: Int, I: l % r}, nil
	}
	return Value{Kind: Int, I: l / r}, nil
}

// comparison is the answer of fn for l and r where fn compares ("=",
// "<>", "<=", "<"); ok is false for any other fn.
func comparison[T int64 | float64](fn string, l, r T) (v Value, ok bool) {
	switch fn {
	case "=":
		return Value{Kind: Bool, B: l == r}, true
	case "<>":
		return Value{Kind: Bool, B: l != r}, true
	case "<=":
		return Value{Kind: Bool, B: l <= r}, true
	case "<":
		return Value{Kind: Bool, B: l < r}, true
	}
	return Value{}, false
}

func extremum(least bool, a []Value) (Value, error) {
	for _, v := range a {
		if v.Kind == Double {
			m, err := extremumOf(least, a, toDouble)
			return Value{Kind: Double, F: m}, err
		}
	}
	m, err := extremumOf(least, a, toInt)
	return Value{Kind: Int, I: m}, err
}

// extremumOf is the least or greatest of a, each converted with to.
func extremumOf[T int64 | float64](least bool, a []Value, to func(Value) (T, error)) (T, error) {
	m, err := to(a[0])
	if err != nil {
		return m, err
	}
	for _, v := range a[1:] {
		x, err := to(v)
		if err != nil {
			return m, err
		}
		// C's Min and Max macros, NaN and all.
		if least && !(m < x) || !least && !(m > x) {
			m = x
		}
	}
	return m, nil
}

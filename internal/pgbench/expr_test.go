package pgbench

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// deterministic are expressions whose value depends on nothing random:
// pgbench must give each the same value as obsbench's evaluator. Many are
// from pgbench's own tests (src/bin/pgbench/t/001_pgbench_with_server.pl);
// the others cover each operator's precedence, each function, the integer
// edge cases and the double formatting.
var deterministic = []string{
	"1 + 2 * 3", "7 / 2", "-7 / 2", "7 % 3", "-7 % 3", "7 % -3", "5 / -1", "9223372036854775807 / -1",
	"-9223372036854775808", "-9223372036854775807 - 1", "9223372036854775807 % -1", "(-9223372036854775807 - 1) % -1",
	"5.0 / 2", "1 / 2.0", "1e3", ".5e1", "5.", "0.1 + 0.2", "1 / 3.0", "1e20", "1e-5", "123456789012345678.0", "1e308 * 10", "-(1e308 * 10)", "0.0 / 0", "ln(0)", "sqrt(-1)", "int(-0.5)",
	"abs(-5)", "abs(-5.5)", "abs(-9223372036854775807)", "least(5, 4.5, 6)", "greatest(1, 2, 3)", "least(1, 2)", "greatest(1.5, 2)",
	"double(5) / 2", "int(5.5)", "int(4.5)", "int(-4.5)", "int(2.5)", "int(-0.4)", "sqrt(2)", "ln(10)", "exp(1)", "pi()", "pow(2, 10)", "power(2, 0.5)",
	"1 < 2", "2 <= 2", "3 > 2", "3 >= 4", "1 = 1.0", "1 <> 2", "1 != 1", "2.5 < 3",
	"true AND false", "true OR NULL", "NULL AND false", "false AND NULL", "true OR false", "NOT true", "NOT (1 < 2)", "NOT 1 = 2",
	"1 IS NULL", "NULL IS NULL", "NULL ISNULL", "1 NOTNULL", "NULL IS NOT NULL", "true IS TRUE", "false IS NOT TRUE", "true IS FALSE", "1 = 1 IS TRUE",
	"5 & 3", "5 | 3", "5 # 3", "~5", "~ 1 + 2", "1 << 10", "1024 >> 3", "-1 >> 1", "1 | 2 & 3", "1 + 2 | 4", "8 >> 1 + 1",
	"1 + 2 * 3 - 4 / 2", "2 * 3 % 4", "-2 * -3", "- - 3", "+ 3", "1 < 2 AND 2 < 3 OR false",
	"CASE WHEN 1 > 2 THEN 1 WHEN 2 > 1 THEN 2 ELSE 3 END", "CASE WHEN false THEN 1 END", "CASE WHEN 0 THEN 1 ELSE 2 END",
	"CASE WHEN 1.5 THEN 10 ELSE 20 END", "CASE WHEN NULL THEN 1 WHEN true THEN 2 END",
	"1 + NULL", "abs(NULL)", "least(1, NULL)",
	"hash(10, 5432)", "hash_fnv1a(10, 5432)", "hash_murmur2(-1, 0)", "hash_fnv1a(0, 0)", "hash_murmur2(9223372036854775807, 1)", "hash_fnv1a(-9223372036854775808, 3)",
	"permute(0, 100, 5432)", "permute(99, 100, 5432)", "permute(12345, 1000000, 12)", "permute(7, 1, 5)", "permute(-3, 10, 7)",
	"permute(5, 3, 123)", "permute(2, 2, 0)", "permute(1000000007, 9223372036854775807, -1)",
	"1 + 2.5", "10 - 0.5", "3 * 1.5", "mod(7, 2)", "ABS(-1)", ":x * 2", ":d + 1", ":b AND true", ":n IS NULL",
}

// failing are expressions whose evaluation fails; pgbench and obsbench
// must both refuse each (pgbench aborts the client).
var failing = []string{
	"1 / 0", "1 % 0", "9223372036854775807 + 1", "-9223372036854775807 - 2", "9223372036854775807 * 2", "(-9223372036854775807 - 1) / -1",
	"int(1e20)", "random(5, 4)", "random(-9223372036854775808, 9223372036854775807)", "random_gaussian(1, 10, 1.5)",
	"random_exponential(1, 10, 0)", "random_zipfian(1, 10, 0.5)", "permute(1, 0, 1)", "true + 1", "NOT 1", "abs(1) AND true", ":nosuch",
}

// malformed are expressions pgbench refuses to load.
var malformed = []string{
	"1 +", "foo(1)", "abs(1, 2)", "least()", "hash(1, 2, 3)", "permute(1)", "1 < 2 < 3", "9223372036854775808", "99999999999999999999",
	"@", "CASE END", "(1", "1 IS 2", "pi", "random(1)",
}

const presets = "\\set x 21\n\\set d 1.5\n\\set b true\n\\set n NULL\n"

var debugLine = regexp.MustCompile(`debug\(script=0,command=(\d+)\): (.*)`)

// Every deterministic expression evaluates, in obsbench, to the value the
// installed pgbench prints for it with debug(); every failing one fails in
// both; every malformed one is refused by both. Needs a server: pgbench
// connects before it runs a script.
func TestExpressionsAgreeWithPgbench(t *testing.T) {
	pg := servertest.Postgres(t)
	pgbench := filepath.Join(pg.BinDir(), "pgbench")
	run := func(script string) (string, error) {
		f := filepath.Join(t.TempDir(), "script.sql")
		if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(pgbench, "-n", "-t", "1", "-f", f, pg.DSN("postgres"))
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	var script strings.Builder
	script.WriteString(presets)
	for i, e := range deterministic {
		fmt.Fprintf(&script, "\\set r%d debug(%s)\n", i, e)
	}
	out, err := run(script.String())
	if err != nil {
		t.Fatalf("pgbench: %v\n%s", err, out)
	}
	want := map[int]string{}
	for _, m := range debugLine.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		want[n-5] = m[2] // the presets are commands 1-4
	}
	env := &Env{Vars: map[string]string{"x": "21", "d": "1.5", "b": "true", "n": "NULL"}}
	for i, e := range deterministic {
		x, err := ParseExpr(e)
		if err != nil {
			t.Errorf("%s: pgbench gives %q; obsbench cannot parse it: %v", e, want[i], err)
			continue
		}
		v, err := x.Eval(env)
		if err != nil {
			t.Errorf("%s: pgbench gives %q; obsbench fails: %v", e, want[i], err)
			continue
		}
		if got := v.Debug(); got != want[i] {
			t.Errorf("%s = %q; pgbench gives %q", e, got, want[i])
		}
	}

	for _, e := range failing {
		out, err := run(presets + "\\set r debug(" + e + ")\n")
		if err == nil && !strings.Contains(out, "aborted") {
			t.Errorf("%s: pgbench did not fail; the corpus is wrong:\n%s", e, out)
		}
		x, perr := ParseExpr(e)
		if perr != nil {
			t.Errorf("%s: obsbench refuses to parse what pgbench loads: %v", e, perr)
			continue
		}
		if v, err := x.Eval(env); err == nil {
			t.Errorf("%s = %s in obsbench; pgbench fails:\n%s", e, v.Debug(), out)
		}
	}

	for _, e := range malformed {
		out, err := run("\\set r " + e + "\n")
		if err == nil {
			t.Errorf("%s: pgbench loaded it; the corpus is wrong:\n%s", e, out)
		}
		if _, perr := ParseExpr(e); perr == nil {
			t.Errorf("%s: obsbench parses what pgbench refuses:\n%s", e, out)
		}
	}
}

// The random functions stay in their bounds and follow their
// distributions: uniform's mean, the exponential's and Gaussian's
// asymmetry and spread, the zipfian's weight on its first values. Fixed
// seed: the test cannot flake.
func TestRandomDistributions(t *testing.T) {
	env := &Env{Rand: NewPRNG(5432)}
	const n = 200000
	draw := func(e string) []int64 {
		x, err := ParseExpr(e)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int64, n)
		for i := range out {
			v, err := x.Eval(env)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = v.I
		}
		return out
	}
	stats := func(xs []int64, lo, hi int64) (mean float64) {
		for _, x := range xs {
			if x < lo || x > hi {
				t.Fatalf("%d out of [%d, %d]", x, lo, hi)
			}
			mean += float64(x)
		}
		return mean / float64(len(xs))
	}
	if m := stats(draw("random(1, 100)"), 1, 100); math.Abs(m-50.5) > 0.3 {
		t.Errorf("random(1, 100) mean %.2f; want 50.5", m)
	}
	// Exponential with parameter p on [0, 999]: mean of the truncated
	// exponential, 1000 * (1/p - e^-p/(1-e^-p)).
	p := 5.0
	if m, want := stats(draw("random_exponential(0, 999, 5)"), 0, 999), 1000*(1/p-math.Exp(-p)/(1-math.Exp(-p)))-0.5; math.Abs(m-want) > 3 {
		t.Errorf("random_exponential mean %.1f; want %.1f", m, want)
	}
	// Gaussian with parameter 2.5 on [0, 999]: symmetric about the middle.
	if m := stats(draw("random_gaussian(0, 999, 2.5)"), 0, 999); math.Abs(m-499.5) > 3 {
		t.Errorf("random_gaussian mean %.1f; want 499.5", m)
	}
	// Zipfian s=1.5 over 1..1000: P(1) = 1/H(1000, 1.5).
	var h float64
	for k := 1; k <= 1000; k++ {
		h += math.Pow(float64(k), -1.5)
	}
	ones := 0
	z := draw("random_zipfian(1, 1000, 1.5)")
	stats(z, 1, 1000)
	for _, x := range z {
		if x == 1 {
			ones++
		}
	}
	if got, want := float64(ones)/n, 1/h; math.Abs(got-want) > 0.01 {
		t.Errorf("random_zipfian share of 1: %.3f; want %.3f", got, want)
	}
}

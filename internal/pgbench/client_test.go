package pgbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/workload"
)

// recorder is an in-memory session for the client's own logic: it records
// each statement sent with its arguments, and answers \gset's queries
// with one row (n = the first argument).
type recorder struct{ sent []string }

type recStmt struct {
	r   *recorder
	sql string
}

func (r *recorder) Prepare(_ context.Context, sql string) (workload.Stmt, error) {
	return recStmt{r, sql}, nil
}

func (s recStmt) Exec(_ context.Context, args ...any) error {
	s.r.sent = append(s.r.sent, fmt.Sprint(s.sql, args))
	return nil
}

func (s recStmt) QueryRows(ctx context.Context, args ...any) ([]string, [][]*string, error) {
	s.Exec(ctx, args...)
	n := fmt.Sprint(args[0])
	return []string{"n"}, [][]*string{{&n}}, nil
}

func run(t *testing.T, c *Client, ops int) {
	t.Helper()
	for i := 0; i < ops; i++ {
		if err := c.Op(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestClientRunsAScriptAsPgbench(t *testing.T) {
	s, err := ParseScript("t.sql", `\set a 1 + :client_id
\if :a > 5
  SELECT 'big', :a;
\elif :a = 3
  SELECT 'three', :a;
  \set a :a * 10
\else
  SELECT 'other', :a;
\endif
SELECT :a, :scale \gset x_
\set b :x_n + 1
SELECT :b;
`)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	c, err := NewClient(rec, []Weighted{{s, 1}}, map[string]string{"scale": "7"}, 2, 1, "obsbench-tag")
	if err != nil {
		t.Fatal(err)
	}
	run(t, c, 3)
	want := []string{
		"/* obsbench-tag */ SELECT 'three', $1[3]",
		"/* obsbench-tag */ SELECT $1, $2[30 7]",
		"/* obsbench-tag */ SELECT $1[31]",
	}
	if strings.Join(rec.sent, "\n") != strings.Join(want, "\n") {
		t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(rec.sent, "\n"), strings.Join(want, "\n"))
	}
	// The next transaction starts over with the variables as they are.
	run(t, c, 1)
	if got := rec.sent[3]; got != "/* obsbench-tag */ SELECT 'three', $1[3]" {
		t.Errorf("second transaction's first statement: %s", got)
	}
}

// A script's closing meta commands end its transaction in the Op of its
// last statement, as pgbench counts them in the transaction, and the
// statement's answer is marked before them (Clock.Ended): at a rate the
// next transaction waits for its arrival only once they are done.
func TestClientClosingMetaEndsTheTransaction(t *testing.T) {
	s, err := ParseScript("t.sql", "\\set a 1\nSELECT :a;\nSELECT 2;\n\\set a :a + 1\n\\sleep 20 ms\n")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	c, err := NewClient(rec, []Weighted{{s, 1}}, nil, 0, 1, "t")
	if err != nil {
		t.Fatal(err)
	}
	for tx := range 2 {
		var clk workload.Clock
		ctx := workload.WithClock(context.Background(), &clk)
		if err := c.Op(ctx); err != nil || !clk.Unfinished || !clk.Ended.IsZero() {
			t.Fatalf("transaction %d, first statement: %v, unfinished %v, ended %v; want the transaction going on", tx, err, clk.Unfinished, clk.Ended)
		}
		clk = workload.Clock{}
		if err := c.Op(ctx); err != nil || clk.Unfinished || clk.Ended.IsZero() {
			t.Fatalf("transaction %d, last statement: %v, unfinished %v, ended %v; want the transaction ended", tx, err, clk.Unfinished, clk.Ended)
		}
		if slept := time.Since(clk.Ended); slept < 20*time.Millisecond {
			t.Errorf("transaction %d: the Op returned %v after the statement's answer; want the 20-ms \\sleep run in it", tx, slept)
		}
	}
	if len(rec.sent) != 4 || rec.sent[2] != "/* t */ SELECT $1[1]" {
		t.Errorf("sent %q; want two transactions of two statements, each from a fresh \\set", rec.sent)
	}
}

// Weights choose the scripts in proportion; a script of weight 0 never
// runs.
func TestClientWeights(t *testing.T) {
	a, _ := ParseScript("a.sql", "SELECT 'a';")
	b, _ := ParseScript("b.sql", "SELECT 'b';")
	z, _ := ParseScript("z.sql", "SELECT 'z';")
	rec := &recorder{}
	c, err := NewClient(rec, []Weighted{{a, 1}, {b, 3}, {z, 0}}, nil, 0, 42, "t")
	if err != nil {
		t.Fatal(err)
	}
	run(t, c, 40000)
	count := map[string]int{}
	for _, s := range rec.sent {
		count[s]++
	}
	if share := float64(count["/* t */ SELECT 'b'[]"]) / 40000; share < 0.74 || share > 0.76 || count["/* t */ SELECT 'z'[]"] != 0 {
		t.Errorf("counts %v: want b three times as often as a, z never", count)
	}
}

func TestClientErrors(t *testing.T) {
	noSQL, _ := ParseScript("n.sql", `\set a 1`)
	if _, err := NewClient(&recorder{}, []Weighted{{noSQL, 1}}, nil, 0, 1, "t"); err != nil {
		t.Fatal(err)
	}
	c, _ := NewClient(&recorder{}, []Weighted{{noSQL, 1}}, nil, 0, 1, "t")
	if err := c.Op(context.Background()); err == nil || !strings.Contains(err.Error(), "no SQL command") {
		t.Errorf("a script without SQL: %v", err)
	}
	undef, _ := ParseScript("u.sql", "SELECT :nope;")
	c, _ = NewClient(&recorder{}, []Weighted{{undef, 1}}, nil, 0, 1, "t")
	if err := c.Op(context.Background()); err == nil || !strings.Contains(err.Error(), `u.sql:1: undefined variable "nope"`) {
		t.Errorf("an undefined variable: %v", err)
	}
	div, _ := ParseScript("d.sql", "\\set x 1 / 0\nSELECT 1;")
	c, _ = NewClient(&recorder{}, []Weighted{{div, 1}}, nil, 0, 1, "t")
	if err := c.Op(context.Background()); err == nil || !strings.Contains(err.Error(), "d.sql:1: division by zero") {
		t.Errorf("division by zero: %v", err)
	}
	if _, err := NewClient(&recorder{}, []Weighted{{div, 0}}, nil, 0, 1, "t"); err == nil {
		t.Error("every weight 0 accepted")
	}
}

// refusing is a session whose statements containing "fail" fail.
type refusing struct{ recorder }

type failStmt struct{ recStmt }

func (f *refusing) Prepare(_ context.Context, sql string) (workload.Stmt, error) {
	return failStmt{recStmt{&f.recorder, sql}}, nil
}

func (s failStmt) Exec(ctx context.Context, args ...any) error {
	s.recStmt.Exec(ctx, args...)
	if strings.Contains(s.sql, "fail") {
		return fmt.Errorf("ERROR: deadlock detected")
	}
	return nil
}

// A statement the server refuses is a statement error: the client rolls
// the transaction back (untagged) and goes on with a new one; the
// Clock says which statement ran and whether the transaction goes on; a
// variable the script never set ends the session.
func TestClientStatementFailure(t *testing.T) {
	s, err := ParseScript("t.sql", "BEGIN;\nSELECT 'fail';\nSELECT 'never';\nCOMMIT;\n")
	if err != nil {
		t.Fatal(err)
	}
	conn := &refusing{}
	c, err := NewClient(conn, []Weighted{{s, 1}}, nil, 0, 1, "tag")
	if err != nil {
		t.Fatal(err)
	}
	var clk workload.Clock
	ctx := workload.WithClock(context.Background(), &clk)
	if err := c.Op(ctx); err != nil || clk.Statement != 0 || !clk.Unfinished {
		t.Fatalf("BEGIN: err %v, clock %+v; want statement 0, unfinished", err, clk)
	}
	clk = workload.Clock{}
	err = c.Op(ctx)
	var se *workload.StatementError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "t.sql:2: ERROR: deadlock detected") || clk.Statement != 1 || clk.Unfinished {
		t.Fatalf("failing statement: err %v, clock %+v; want a statement error at t.sql:2, statement 1, finished", err, clk)
	}
	if err := c.Op(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"/* tag */ BEGIN[]", "/* tag */ SELECT 'fail'[]", "ROLLBACK[]", "/* tag */ BEGIN[]"}
	if strings.Join(conn.sent, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q; want %q", conn.sent, want)
	}

	u, _ := ParseScript("u.sql", "SELECT :nosuch;\n")
	c, _ = NewClient(conn, []Weighted{{u, 1}}, nil, 0, 1, "tag")
	if err := c.Op(ctx); err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), `u.sql:1: undefined variable "nosuch"`) {
		t.Errorf("undefined variable: err %v; want a session error at u.sql:1", err)
	}
}

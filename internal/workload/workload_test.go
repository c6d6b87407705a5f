package workload_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/workload"
)

func TestWithParams(t *testing.T) {
	wl, err := workload.Lookup("inserts-batched")
	if err != nil {
		t.Fatal(err)
	}
	if got := wl.Value("batch"); got != 10000 {
		t.Errorf("default batch = %d; want 10000", got)
	}
	wl, err = wl.WithParams(map[string]int{"batch": 7})
	if err != nil || wl.Value("batch") != 7 || wl.New() == nil {
		t.Errorf("WithParams(batch=7) = %d, %v", wl.Value("batch"), err)
	}
	for _, tc := range []struct {
		name   string
		params map[string]int
		want   string
	}{
		{"inserts-batched", map[string]int{"batch": 0}, "--batch 0: want 1 to"},
		{"inserts-batched", map[string]int{"rows": 5}, "has no parameter --rows; its parameters: --batch"},
		{"credit-top1", map[string]int{"batch": 5}, "credit-top1 has no parameter --batch"},
	} {
		m, _ := workload.Lookup(tc.name)
		if _, err := m.WithParams(tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s.WithParams(%v) = %v; want an error with %q", tc.name, tc.params, err, tc.want)
		}
	}
	var names []string
	for _, p := range workload.AllParams() {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "batch,blocks,client-work,scale,shrink" {
		t.Errorf("AllParams = %v; want [batch blocks client-work scale shrink]", names)
	}
}

// dss-mix takes --scale and runs on both engines' dialects with its own
// set-up each.
func TestDSSMixMeta(t *testing.T) {
	m, err := workload.Lookup("dss-mix")
	if err != nil {
		t.Fatal(err)
	}
	if m.Dataset != "dss" || !m.HasParam("scale") || m.Value("scale") != 1 {
		t.Errorf("dss-mix: dataset %s, scale %d", m.Dataset, m.Value("scale"))
	}
	for _, d := range []workload.Dialect{workload.PostgreSQL, workload.MariaDB} {
		if len(m.SetupIn(d)) != 2 || !m.In(d) {
			t.Errorf("%s: set-up %q", d, m.SetupIn(d))
		}
	}
	if m.In(workload.TransactSQL) {
		t.Error("dss-mix runs in Transact-SQL; its functions are written for PostgreSQL and MariaDB only")
	}
	if _, err := m.WithParams(map[string]int{"scale": 0}); err == nil {
		t.Error("--scale 0 accepted")
	}
	if n := len(workload.DSSWeights()); n < 10 || n > 14 {
		t.Errorf("%d queries; want a mix of 10 to 14", n)
	}
}

// recorder is a Conn whose statements record their executions.
type recorder struct {
	sqls []string
	runs [][]any // arguments of each execution, by statement
	last int     // statement of the last execution
}

func (c *recorder) Prepare(_ context.Context, sql string) (workload.Stmt, error) {
	c.sqls = append(c.sqls, sql)
	c.runs = append(c.runs, nil)
	return recorded{c, len(c.sqls) - 1}, nil
}

type recorded struct {
	c *recorder
	i int
}

func (s recorded) Exec(_ context.Context, args ...any) error {
	s.c.runs[s.i] = append(s.c.runs[s.i], args...)
	s.c.last = s.i
	return nil
}

// placeholder is a numbered parameter; anything else with a $ would break
// MariaDB's session, which turns $N into ? in order.
var placeholder = regexp.MustCompile(`\$[0-9]+`)

// Every statement of dss-mix is a tagged, read-only SELECT whose $N
// placeholders are numbered in order and match the arguments it gets;
// keys are in range at the scale, and dates are inside the orders' span.
func TestDSSMixStatements(t *testing.T) {
	const scale = 3
	m, err := workload.Lookup("dss-mix")
	if err != nil {
		t.Fatal(err)
	}
	weights := workload.DSSWeights()
	sz := dataset.DSSSize(scale, 1)
	last := dataset.DSSFirstDay.AddDate(0, 0, dataset.DSSDays)
	maxKey := 0
	for i, w := range weights {
		c := &recorder{}
		op, err := workload.DSSQuery(scale, i, 50).Worker(context.Background(), c, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.sqls) != len(weights) {
			t.Fatalf("a session prepares %d statements; want the %d of the mix", len(c.sqls), len(weights))
		}
		for op(context.Background()) == nil {
		}
		sql := c.sqls[i]
		if !strings.HasPrefix(sql, "SELECT ") || !strings.HasSuffix(sql, "/* "+m.Tag+" "+w.Query+" */") || strings.Contains(sql, ";") {
			t.Errorf("%s: %q is not one SELECT ending with its tag", w.Query, sql)
		}
		for _, verb := range []string{"INSERT ", "UPDATE ", "DELETE ", " FOR UPDATE"} {
			if strings.Contains(strings.ToUpper(sql), verb) {
				t.Errorf("%s writes or locks: %q", w.Query, sql)
			}
		}
		ps := placeholder.FindAllString(sql, -1)
		for k, p := range ps {
			if p != "$"+strconv.Itoa(k+1) {
				t.Errorf("%s: placeholder %d is %s", w.Query, k+1, p)
			}
		}
		if strings.Count(sql, "$") != len(ps) {
			t.Errorf("%s: a $ that is not a placeholder: %q", w.Query, sql)
		}
		args := c.runs[i]
		if len(args) != 50*len(ps) {
			t.Fatalf("%s: %d arguments in 50 executions; want %d each", w.Query, len(args), len(ps))
		}
		for _, a := range args {
			switch a := a.(type) {
			case int:
				if a < 1 || a > sz.Orders {
					t.Errorf("%s: key %d out of 1..%d", w.Query, a, sz.Orders)
				}
				maxKey = max(maxKey, a)
			case string:
				if slices.Contains(dataset.DSSRegions, a) {
					continue
				}
				d, err := time.Parse("2006-01-02", a)
				if err != nil {
					t.Errorf("%s: argument %q is neither a date nor a region", w.Query, a)
				} else if d.Before(dataset.DSSFirstDay) || d.After(last) {
					t.Errorf("%s: date %s outside the orders' span", w.Query, a)
				}
			default:
				t.Errorf("%s: argument %v of type %T", w.Query, a, a)
			}
		}
	}
	if lim := dataset.DSSSize(1, 1).Orders; maxKey <= lim {
		t.Errorf("at scale %d no key above scale 1's %d: the draws ignore the scale", scale, lim)
	}
}

// dss-mix draws its queries by weight: over many draws each query's share
// of executions is its share of the weights, and the reports over all the
// data (q10-q13) stay a few percent of executions.
func TestDSSMixWeights(t *testing.T) {
	m, err := workload.Lookup("dss-mix")
	if err != nil {
		t.Fatal(err)
	}
	weights := workload.DSSWeights()
	total, reports := 0, 0
	for _, w := range weights {
		if w.Weight < 1 {
			t.Errorf("%s has weight %d", w.Query, w.Weight)
		}
		total += w.Weight
		if w.Query >= "q10" {
			reports += w.Weight
		}
	}
	if share := float64(reports) / float64(total); share < 0.02 || share > 0.08 {
		t.Errorf("reports are %.1f%% of the weight; want a few percent", 100*share)
	}
	const draws = 50_000
	c := &recorder{}
	op, err := m.New().Worker(context.Background(), c, 7)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, len(weights))
	for range draws {
		if err := op(context.Background()); err != nil {
			t.Fatal(err)
		}
		counts[c.last]++
	}
	for i, w := range weights {
		want := float64(draws*w.Weight) / float64(total)
		if got := float64(counts[i]); math.Abs(got-want) > 5*math.Sqrt(want) {
			t.Errorf("%s ran %.0f times in %d draws; its weight %d/%d says %.0f", w.Query, got, draws, w.Weight, total, want)
		}
	}
}

// dss-mix with --blocks is fixed work: each session runs every query as
// often as its weight per block, the same executions as every other
// session in an order of its own, and is then done.
func TestDSSMixBlocks(t *testing.T) {
	m, err := workload.Lookup("dss-mix")
	if err != nil {
		t.Fatal(err)
	}
	if m.FixedWork() {
		t.Error("dss-mix without --blocks says it is fixed work")
	}
	const blocks = 2
	if m, err = m.WithParams(map[string]int{"blocks": blocks}); err != nil || !m.FixedWork() {
		t.Fatalf("WithParams(blocks=2): FixedWork %v, %v", m.FixedWork(), err)
	}
	weights := workload.DSSWeights()
	total := 0
	for _, w := range weights {
		total += w.Weight
	}
	var orders []string
	var work []string
	for session := range 3 {
		c := &recorder{}
		op, err := m.New().Worker(context.Background(), c, session)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		ran := make([]int, len(weights))
		for n := 0; ; n++ {
			err := op(context.Background())
			if errors.Is(err, workload.ErrDone) {
				break
			}
			if err != nil || n > blocks*total {
				t.Fatalf("session %d, execution %d: %v (want ErrDone after %d)", session, n, err, blocks*total)
			}
			order = append(order, strconv.Itoa(c.last))
			ran[c.last]++
		}
		if len(order) != blocks*total {
			t.Errorf("session %d ran %d statements; want %d blocks of %d", session, len(order), blocks, total)
		}
		for i, w := range weights {
			if n := ran[i]; n != blocks*w.Weight {
				t.Errorf("session %d ran %s %d times; want %d (weight %d x %d blocks)", session, w.Query, n, blocks*w.Weight, w.Weight, blocks)
			}
		}
		orders = append(orders, strings.Join(order, " "))
		// The same executions: each query's arguments, as a sorted multiset.
		var args []string
		for _, run := range c.runs {
			for _, a := range run {
				args = append(args, fmt.Sprint(a))
			}
		}
		slices.Sort(args)
		work = append(work, strings.Join(args, ","))
	}
	if work[0] != work[1] || work[1] != work[2] {
		t.Error("sessions ran different executions; want the same work in each")
	}
	if orders[0] == orders[1] || orders[1] == orders[2] {
		t.Error("two sessions ran their executions in the same order; want an order of each session's own")
	}
}

// Counted gives a workload its most fixed work and keeps its other
// settings: a counted run's sessions run the fixed sequence for as many
// statements as the run asks for.
func TestCounted(t *testing.T) {
	m, err := workload.Lookup("dss-mix")
	if err != nil {
		t.Fatal(err)
	}
	if m, err = m.WithParams(map[string]int{"scale": 2}); err != nil {
		t.Fatal(err)
	}
	c := m.Counted()
	if c.Value("blocks") != 10000 || c.Value("scale") != 2 || m.Value("blocks") != 0 {
		t.Errorf("counted: blocks %d, scale %d (the original's blocks %d); want 10000, 2 (0)",
			c.Value("blocks"), c.Value("scale"), m.Value("blocks"))
	}
	// Session 3's first two blocks are those of its fixed sequence.
	rec, want := &recorder{}, &recorder{}
	for _, x := range []struct {
		meta workload.Meta
		conn *recorder
	}{{c, rec}, {mustParams(t, m, map[string]int{"blocks": 2, "scale": 2}), want}} {
		op, err := x.meta.New().Worker(context.Background(), x.conn, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 * 101 {
			if err := op(context.Background()); err != nil {
				t.Fatalf("statement %d: %v", i+1, err)
			}
		}
	}
	if !reflect.DeepEqual(rec.runs, want.runs) {
		t.Error("a counted dss-mix's first two blocks differ from --blocks 2's")
	}
}

func mustParams(t *testing.T, m workload.Meta, p map[string]int) workload.Meta {
	t.Helper()
	m, err := m.WithParams(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// credit-top1-calibrated's --client-work spends the session's own time
// before each statement, and the statement's latency starts after it.
func TestClientWork(t *testing.T) {
	m, err := workload.Lookup(workload.Calibrated)
	if err != nil {
		t.Fatal(err)
	}
	for _, us := range []int{0, 3000} {
		w, err := m.WithParam("client-work", us)
		if err != nil {
			t.Fatal(err)
		}
		c := &recorder{}
		op, err := w.New().Worker(context.Background(), c, 0)
		if err != nil {
			t.Fatal(err)
		}
		var clock workload.Clock
		t0 := time.Now()
		if err := op(workload.WithClock(context.Background(), &clock)); err != nil {
			t.Fatal(err)
		}
		took, waited := time.Since(t0), clock.Began.Sub(t0)
		switch {
		case len(c.sqls) != 1 || !strings.Contains(c.sqls[0], "obsbench_calibrate()"):
			t.Errorf("client-work %d: prepared %q; want the calibrated statement alone", us, c.sqls)
		case us > 0 && (took < 3*time.Millisecond || waited < 3*time.Millisecond):
			t.Errorf("client-work %d µs: the op took %v, its statement began %v after the op; want both at least 3ms", us, took, waited)
		case us == 0 && !clock.Began.IsZero():
			t.Errorf("client-work 0: the statement's start was set (%v); the driver's own is kept", clock.Began)
		}
	}
	if _, err := m.WithParam("client-work", 20_000); err == nil || !strings.Contains(err.Error(), "want 0 to 10000") {
		t.Errorf("client-work 20000: %v; want an error naming the range", err)
	}
}

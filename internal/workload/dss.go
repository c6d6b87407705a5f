package workload

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/obsbench/obsbench/internal/dataset"
)

// dssTag is in every statement of dss-mix.
const dssTag = "obsbench-dss"

// dssQuery is one query of the decision-support mix: its weight among the
// executions, and the parameters a draw gives it.
type dssQuery struct {
	name   string
	weight int
	sql    string
	params func(r *rand.Rand, sz dataset.DSSScale) []any
}

// dssQueries are study 3's mix: read-only, mostly sub-second lookups and
// small aggregates, plus ad hoc reports over all the data that take
// seconds (q10-q13, 5% of executions, most of the CPU), and calls of
// stored functions (q06, q07). Each text is one line, so that a
// line-oriented log holds a statement and its tag on the same line.
//
// Mean latency at scale 1, one session, on the 2-core machine the project
// runs on (go test ./internal/engine/postgres -run TestDSSMix -v, and
// mariadb): see docs/targets.md.
var dssQueries = []dssQuery{
	{"q01", 20, "SELECT o.order_id, o.order_date, o.total, l.line_no, p.name, l.quantity FROM dss_orders o JOIN dss_order_line l ON l.order_id = o.order_id JOIN dss_product p ON p.product_id = l.product_id WHERE o.customer_id = $1 ORDER BY o.order_date DESC, o.order_id, l.line_no LIMIT 20",
		func(r *rand.Rand, sz dataset.DSSScale) []any { return []any{customer(r, sz)} }},
	{"q02", 20, "SELECT l.line_no, p.name, p.category, l.quantity, l.price FROM dss_order_line l JOIN dss_product p ON p.product_id = l.product_id WHERE l.order_id = $1 ORDER BY l.line_no",
		func(r *rand.Rand, sz dataset.DSSScale) []any { return []any{1 + r.IntN(sz.Orders)} }},
	{"q03", 12, "SELECT count(*), sum(l.quantity), sum(l.quantity * l.price) FROM dss_order_line l JOIN dss_orders o ON o.order_id = l.order_id WHERE l.product_id = $1 AND o.order_date >= $2 AND o.order_date < $3",
		func(r *rand.Rand, sz dataset.DSSScale) []any { return append([]any{product(r, sz)}, window(r, 30)...) }},
	{"q04", 10, "SELECT status, count(*), sum(total) FROM dss_orders WHERE order_date >= $1 AND order_date < $2 GROUP BY status ORDER BY status",
		func(r *rand.Rand, _ dataset.DSSScale) []any { return window(r, 7) }},
	{"q05", 8, "SELECT c.customer_id, c.name, sum(o.total) AS revenue FROM dss_customer c JOIN dss_orders o ON o.customer_id = c.customer_id WHERE c.region = $1 AND o.order_date >= $2 AND o.order_date < $3 GROUP BY c.customer_id, c.name ORDER BY revenue DESC, c.customer_id LIMIT 10",
		func(r *rand.Rand, _ dataset.DSSScale) []any { return append([]any{region(r)}, window(r, 91)...) }},
	{"q06", 12, "SELECT dss_customer_value($1)",
		func(r *rand.Rand, sz dataset.DSSScale) []any { return []any{customer(r, sz)} }},
	{"q07", 8, "SELECT dss_product_revenue($1, $2, $3)",
		func(r *rand.Rand, sz dataset.DSSScale) []any { return append([]any{product(r, sz)}, window(r, 91)...) }},
	{"q08", 3, "SELECT p.category, sum(l.quantity * l.price) AS revenue FROM dss_order_line l JOIN dss_orders o ON o.order_id = l.order_id JOIN dss_product p ON p.product_id = l.product_id WHERE o.order_date >= $1 AND o.order_date < $2 GROUP BY p.category ORDER BY revenue DESC",
		func(r *rand.Rand, _ dataset.DSSScale) []any { return window(r, 30) }},
	{"q09", 3, "SELECT c.segment, count(DISTINCT o.customer_id), avg(o.total) FROM dss_orders o JOIN dss_customer c ON c.customer_id = o.customer_id WHERE o.order_date >= $1 AND o.order_date < $2 GROUP BY c.segment ORDER BY c.segment",
		func(r *rand.Rand, _ dataset.DSSScale) []any { return window(r, 91) }},
	{"q10", 2, "SELECT p.category, EXTRACT(YEAR FROM o.order_date), EXTRACT(MONTH FROM o.order_date), sum(l.quantity * l.price) FROM dss_order_line l JOIN dss_orders o ON o.order_id = l.order_id JOIN dss_product p ON p.product_id = l.product_id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
		nil},
	{"q11", 1, "SELECT region, customer_id, revenue FROM (SELECT c.region, c.customer_id, sum(o.total) AS revenue, rank() OVER (PARTITION BY c.region ORDER BY sum(o.total) DESC) AS rk FROM dss_customer c JOIN dss_orders o ON o.customer_id = c.customer_id GROUP BY c.region, c.customer_id) t WHERE rk <= 5 ORDER BY region, rk, customer_id",
		nil},
	{"q13", 1, "SELECT count(*) FROM dss_orders o WHERE o.total > 2 * (SELECT avg(o2.total) FROM dss_orders o2 WHERE o2.customer_id = o.customer_id) AND o.order_date >= $1",
		func(r *rand.Rand, _ dataset.DSSScale) []any { return window(r, dataset.DSSDays-90)[:1] }},
	{"q12", 1, "SELECT count(*) FROM dss_product p WHERE NOT EXISTS (SELECT 1 FROM dss_order_line l JOIN dss_orders o ON o.order_id = l.order_id WHERE l.product_id = p.product_id AND o.order_date >= $1 AND o.order_date < $2)",
		func(r *rand.Rand, _ dataset.DSSScale) []any { return window(r, 365) }},
}

func customer(r *rand.Rand, sz dataset.DSSScale) int {
	u := r.Float64() // skewed like the orders' customers: popular ones asked about more
	return 1 + int(u*u*float64(sz.Customers))%sz.Customers
}

func product(r *rand.Rand, sz dataset.DSSScale) int {
	u := r.Float64()
	return 1 + int(u*u*float64(sz.Products))%sz.Products
}

func region(r *rand.Rand) string {
	return []string{"north", "south", "east", "west", "central", "coast", "mountain", "islands"}[r.IntN(8)]
}

// window is a random date range of days inside the orders' span, as
// 'YYYY-MM-DD' strings (a date parameter both engines take).
func window(r *rand.Rand, days int) []any {
	from := dataset.DSSFirstDay.AddDate(0, 0, r.IntN(dataset.DSSDays-days))
	return []any{from.Format("2006-01-02"), from.AddDate(0, 0, days).Format("2006-01-02")}
}

// dssSetup are the stored functions q06 and q07 call, per dialect.
var dssSetup = map[string][]string{
	"postgres": {
		"CREATE OR REPLACE FUNCTION dss_customer_value(c int) RETURNS numeric LANGUAGE sql STABLE AS $$ SELECT coalesce(sum(total), 0) FROM dss_orders WHERE customer_id = c $$",
		"CREATE OR REPLACE FUNCTION dss_product_revenue(p int, d1 date, d2 date) RETURNS numeric LANGUAGE sql STABLE AS $$ SELECT coalesce(sum(l.quantity * l.price), 0) FROM dss_order_line l JOIN dss_orders o ON o.order_id = l.order_id WHERE l.product_id = p AND o.order_date >= d1 AND o.order_date < d2 $$",
	},
	"mariadb": {
		"CREATE OR REPLACE FUNCTION dss_customer_value(c INT) RETURNS DECIMAL(14,2) READS SQL DATA RETURN (SELECT COALESCE(SUM(total), 0) FROM dss_orders WHERE customer_id = c)",
		"CREATE OR REPLACE FUNCTION dss_product_revenue(p INT, d1 DATE, d2 DATE) RETURNS DECIMAL(14,2) READS SQL DATA RETURN (SELECT COALESCE(SUM(l.quantity * l.price), 0) FROM dss_order_line l JOIN dss_orders o ON o.order_id = l.order_id WHERE l.product_id = p AND o.order_date >= d1 AND o.order_date < d2)",
	},
}

func init() {
	Register(Meta{
		Name:           "dss-mix",
		Description:    "study 3: read-only decision-support mix on dss (12 queries: lookups, small aggregates, stored functions, and reports over all data that take seconds)",
		Dataset:        "dss",
		Tag:            dssTag,
		Engines:        []string{"postgres", "mariadb"},
		EngineSetup:    dssSetup,
		DefaultClients: 8,
		Params:         []Param{{Name: "scale", Default: 1, Min: 1, Max: 100, Usage: "dss dataset scale (rows x scale)"}},
		Build:          func(p map[string]int) Workload { return dssMix{scale: p["scale"]} },
	})
}

// DSSQueryNames lists the mix's queries, in order, with their weights.
func DSSQueryNames() []string {
	out := make([]string, len(dssQueries))
	for i, q := range dssQueries {
		out[i] = fmt.Sprintf("%s (weight %d)", q.name, q.weight)
	}
	return out
}

// dssMix draws each session's next query by weight.
type dssMix struct {
	scale int
	// each, if set, runs every query once in order and then is done (a
	// test that every query runs on an engine); only, if above 0, runs
	// only query number only.
	each bool
	only int
}

// DSSEachOnce is dss-mix at scale that runs each query once per session,
// in order, then ends the session.
func DSSEachOnce(scale int) Workload { return dssMix{scale: scale, each: true} }

// DSSOnce is dss-mix at scale that runs query number i (from 1) once per
// session: its latency.
func DSSOnce(scale, i int) Workload { return dssMix{scale: scale, each: true, only: i} }

func (w dssMix) Worker(ctx context.Context, conn Conn, session int) (Op, error) {
	stmts := make([]Stmt, len(dssQueries))
	total := 0
	for i, q := range dssQueries {
		sql := q.sql + " /* " + dssTag + " " + q.name + " */"
		st, err := conn.Prepare(ctx, sql)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.name, err)
		}
		stmts[i] = st
		total += q.weight
	}
	sz := dataset.DSSSize(max(w.scale, 1))
	r := rand.New(rand.NewPCG(uint64(session), 3))
	next := 0
	return func(ctx context.Context) error {
		i := 0
		switch {
		case w.only > 0:
			if next > 0 {
				return ErrDone
			}
			i, next = w.only-1, 1
		case w.each:
			if next == len(dssQueries) {
				return ErrDone
			}
			i, next = next, next+1
		default:
			for n := r.IntN(total); n >= dssQueries[i].weight; i++ {
				n -= dssQueries[i].weight
			}
		}
		var args []any
		if p := dssQueries[i].params; p != nil {
			args = p(r, sz)
		}
		if err := stmts[i].Exec(ctx, args...); err != nil {
			return fmt.Errorf("%s: %w", dssQueries[i].name, err)
		}
		return nil
	}, nil
}

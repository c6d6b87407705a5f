package workload

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/obsbench/obsbench/internal/dataset"
)

// dss-mix is study 3's decision-support mix: 13 read-only queries on the
// dss dataset, each execution drawn by weight (the weights sum to 101).
// Most executions are short lookups; the reports q10-q13 are 5% of them
// but most of the server's time, so under several sessions on a few
// cores a report takes seconds. Each query's latency alone, per engine,
// is in bench/mix-stratified/README.md.

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

// dssQueries are the mix (see the table above): lookups and small
// aggregates, calls of stored functions (q06, q07), and ad hoc reports
// over all the data (q10-q13). Parameters are skewed as the data is, and
// dates are 'YYYY-MM-DD' strings, which both engines take for a date
// parameter. Each text is one line, so that a line-oriented log holds a
// statement and its tag on the same line.
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
	{"q12", 1, "SELECT count(*) FROM dss_product p WHERE NOT EXISTS (SELECT 1 FROM dss_order_line l JOIN dss_orders o ON o.order_id = l.order_id WHERE l.product_id = p.product_id AND o.order_date >= $1 AND o.order_date < $2)",
		func(r *rand.Rand, _ dataset.DSSScale) []any { return window(r, 365) }},
	{"q13", 1, "SELECT count(*) FROM dss_orders o WHERE o.total > 2 * (SELECT avg(o2.total) FROM dss_orders o2 WHERE o2.customer_id = o.customer_id) AND o.order_date >= $1",
		func(r *rand.Rand, _ dataset.DSSScale) []any { return window(r, dataset.DSSDays-90)[:1] }},
}

func customer(r *rand.Rand, sz dataset.DSSScale) int {
	return int(dataset.Skewed(r.Float64(), sz.Customers))
}

func product(r *rand.Rand, sz dataset.DSSScale) int {
	return int(dataset.Skewed(r.Float64(), sz.Products))
}

func region(r *rand.Rand) string {
	return dataset.DSSRegions[r.IntN(len(dataset.DSSRegions))]
}

// window is a random date range of days inside the orders' span, as
// 'YYYY-MM-DD' strings (a date parameter both engines take).
func window(r *rand.Rand, days int) []any {
	from := dataset.DSSFirstDay.AddDate(0, 0, r.IntN(dataset.DSSDays-days))
	return []any{from.Format("2006-01-02"), from.AddDate(0, 0, days).Format("2006-01-02")}
}

// dssSetup are the stored functions q06 and q07 call, per dialect.
var dssSetup = map[Dialect][]string{
	PostgreSQL: {
		"CREATE OR REPLACE FUNCTION dss_customer_value(c int) RETURNS numeric LANGUAGE sql STABLE AS $$ SELECT coalesce(sum(total), 0) FROM dss_orders WHERE customer_id = c $$",
		"CREATE OR REPLACE FUNCTION dss_product_revenue(p int, d1 date, d2 date) RETURNS numeric LANGUAGE sql STABLE AS $$ SELECT coalesce(sum(l.quantity * l.price), 0) FROM dss_order_line l JOIN dss_orders o ON o.order_id = l.order_id WHERE l.product_id = p AND o.order_date >= d1 AND o.order_date < d2 $$",
	},
	MariaDB: {
		"CREATE OR REPLACE FUNCTION dss_customer_value(c INT) RETURNS DECIMAL(14,2) READS SQL DATA RETURN (SELECT COALESCE(SUM(total), 0) FROM dss_orders WHERE customer_id = c)",
		"CREATE OR REPLACE FUNCTION dss_product_revenue(p INT, d1 DATE, d2 DATE) RETURNS DECIMAL(14,2) READS SQL DATA RETURN (SELECT COALESCE(SUM(l.quantity * l.price), 0) FROM dss_order_line l JOIN dss_orders o ON o.order_id = l.order_id WHERE l.product_id = p AND o.order_date >= d1 AND o.order_date < d2)",
	},
}

// dssParams are dss-mix's settings (and its calibrated variant's).
var dssParams = []Param{
	{Name: "scale", Default: 1, Min: 1, Max: 100, Usage: "dataset scale: dss's rows x scale; pgbench's -s (pgbench -i's tables at this scale, and :scale)"},
	{Name: "shrink", Default: 1, Min: 1, Max: 100,
		Usage: "dss-mix: the dss dataset with 1/N of its rows at --scale, the queries' parameters drawn over them (--count-shrink counts the mix at such a size: under valgrind a report over every row takes tens of times longer)"},
	{Name: "blocks", Default: 0, Min: 0, Max: 10000, FixedWork: true,
		Usage: "dss-mix: each session runs this many blocks of 101 statements (every query as often as its weight; the same statements in each session, in its own order), then the run ends (fixed work; --duration is then a cap); 0 draws until --duration ends"},
}

func init() {
	Register(Meta{
		Name:           "dss-mix",
		Description:    "study 3: read-only decision-support mix on dss (13 queries: lookups, small aggregates, stored functions, and reports over all data that take up to seconds)",
		Dataset:        "dss",
		Tag:            dssTag,
		Dialects:       []Dialect{PostgreSQL, MariaDB},
		DialectSetup:   dssSetup,
		DefaultClients: 8,
		LongStatements: true,
		Params:         dssParams,
		Build: func(p map[string]int) Workload {
			return dssMix{scale: p["scale"], shrink: p["shrink"], blocks: p["blocks"]}
		},
	})
	Register(Meta{
		Name:           "dss-mix-calibrated",
		Description:    "dss-mix, each execution followed in the same operation by a server function whose work obsbench's calibration observer sets (obsbench calibrate --workload dss-mix)",
		Dataset:        "dss",
		Tag:            dssTag,
		Dialects:       []Dialect{PostgreSQL}, // plpgsql
		Setup:          calibrationSetup,
		DialectSetup:   dssSetup,
		DefaultClients: 8,
		LongStatements: true,
		Params:         dssParams,
		Build: func(p map[string]int) Workload {
			return dssMix{scale: p["scale"], shrink: p["shrink"], blocks: p["blocks"], calibrated: true}
		},
	})
}

// DSSWeight is one query of dss-mix and its weight in the draw.
type DSSWeight struct {
	Query  string
	Weight int
}

// DSSWeights lists dss-mix's queries in the order DSSQuery numbers them.
func DSSWeights() []DSSWeight {
	out := make([]DSSWeight, len(dssQueries))
	for i, q := range dssQueries {
		out[i] = DSSWeight{q.name, q.weight}
	}
	return out
}

// DSSQuery is dss-mix at scale whose sessions run only query i (an index
// of DSSWeights), times times with new parameters each, and are then done:
// a test's way to run every query and time it alone.
func DSSQuery(scale, i, times int) Workload { return dssMix{scale: scale, query: i, times: times} }

// dssMix draws each session's next query by weight, runs blocks of the
// mix (blocks > 0), or runs one query a number of times (times > 0).
type dssMix struct {
	scale        int
	shrink       int // the dataset's rows divided by it
	query, times int
	blocks       int
	// calibrated runs obsbench_calibrate() after each execution, in the
	// same Op: its server work, which the calibration observer sets, is
	// in the execution's server CPU (not in what observers count: the
	// call carries no tag).
	calibrated bool
}

// dssDraw is one execution: a query of dssQueries and its parameters.
type dssDraw struct {
	query int
	args  []any
}

func (w dssMix) Worker(ctx context.Context, conn Conn, session int) (Op, error) {
	if w.times > 0 && (w.query < 0 || w.query >= len(dssQueries)) {
		return nil, fmt.Errorf("dss-mix has queries 0 to %d, not %d", len(dssQueries)-1, w.query)
	}
	stmts := make([]Stmt, len(dssQueries))
	for i, q := range dssQueries {
		sql := q.sql + " /* " + dssTag + " " + q.name + " */"
		st, err := conn.Prepare(ctx, sql)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.name, err)
		}
		stmts[i] = st
	}
	var calibrate Stmt
	if w.calibrated {
		st, err := conn.Prepare(ctx, "SELECT obsbench_calibrate()")
		if err != nil {
			return nil, fmt.Errorf("calibration: %w", err)
		}
		calibrate = st
	}
	next := w.draws(session)
	return func(ctx context.Context) error {
		d, ok := next()
		if !ok {
			return ErrDone
		}
		if c := Clocked(ctx); c != nil {
			c.Statement = d.query
		}
		if err := stmts[d.query].Exec(ctx, d.args...); err != nil {
			return fmt.Errorf("%s: %w", dssQueries[d.query].name, err)
		}
		if calibrate != nil {
			if err := calibrate.Exec(ctx); err != nil {
				return fmt.Errorf("calibration: %w", err)
			}
		}
		return nil
	}, nil
}

// StatementNames names the mix's queries (q01 to q13): the driver keeps
// each one's latency and, where it can read it, server CPU, which the
// analysis compares query by query.
func (w dssMix) StatementNames() []string {
	out := make([]string, len(dssQueries))
	for i, q := range dssQueries {
		out[i] = q.name
	}
	return out
}

// draws returns session's executions in order; false when it has no more.
func (w dssMix) draws(session int) func() (dssDraw, bool) {
	sz := dataset.DSSSize(max(w.scale, 1), w.shrink)
	r := rand.New(rand.NewPCG(uint64(session), 3))
	switch {
	case w.times > 0:
		ran := 0
		return func() (dssDraw, bool) {
			if ran == w.times {
				return dssDraw{}, false
			}
			ran++
			return draw(r, sz, w.query), true
		}
	case w.blocks > 0:
		var queue []dssDraw
		block := 0
		return func() (dssDraw, bool) {
			if len(queue) == 0 {
				if block == w.blocks {
					return dssDraw{}, false
				}
				queue = dssBlock(block, session, sz)
				block++
			}
			d := queue[0]
			queue = queue[1:]
			return d, true
		}
	}
	total := 0
	for _, q := range dssQueries {
		total += q.weight
	}
	return func() (dssDraw, bool) {
		i := 0
		for n := r.IntN(total); n >= dssQueries[i].weight; i++ {
			n -= dssQueries[i].weight
		}
		return draw(r, sz, i), true
	}
}

// dssBlock is block number block of session: every query as many times as
// its weight, with parameters that depend on the block only, in an order
// of the session's own. Every session so has the same work, whose cost
// hardly varies with the order (the reports' cost is most of it): a run
// of blocks ends when the slowest session is done, and with equal work
// that is near when the others are, so its duration measures the server,
// not which session drew the most reports.
func dssBlock(block, session int, sz dataset.DSSScale) []dssDraw {
	params := rand.New(rand.NewPCG(uint64(block), 7))
	var out []dssDraw
	for i, q := range dssQueries {
		for range q.weight {
			out = append(out, draw(params, sz, i))
		}
	}
	order := rand.New(rand.NewPCG(uint64(session), uint64(block)+11))
	order.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// draw is an execution of query i with parameters from r.
func draw(r *rand.Rand, sz dataset.DSSScale, i int) dssDraw {
	d := dssDraw{query: i}
	if p := dssQueries[i].params; p != nil {
		d.args = p(r, sz)
	}
	return d
}

package workload

import (
	"context"
	"math/rand/v2"
)

// Study 5's "thousand-queries" on table tab72: the study timed 1,000
// executions of one query in a loop as one iteration. Here an operation is
// one execution, so that statements, events and latency keep their usual
// meaning; the audit study reports them per thousand (ms per thousand-query
// = 1,000 x mean latency; thousand-queries per minute = statements/s x
// 60 / 1,000).
const (
	tab72Tag      = "obsbench-tab72"
	tab72PointSQL = "SELECT c1, c2, c3 FROM tab72 WHERE c1 = $1 /* " + tab72Tag + " point */"
	tab72RangeSQL = "SELECT c1, c2, c3 FROM tab72 WHERE c3 LIKE '%SQLWorkshops%' AND c1 BETWEEN 1 AND 10 /* " + tab72Tag + " range */"
)

func init() {
	Register(Meta{
		Name:           "thousand-point",
		Description:    "study 5: point lookup of a random key of tab72 (50,000 rows of 2,000 characters); reported per thousand-query",
		Dataset:        "tab72",
		Tag:            tab72Tag,
		DefaultClients: 4,
		New:            func() Workload { return pointLookup{sql: tab72PointSQL, keys: 50_000} },
	})
	Register(Meta{
		Name:           "thousand-range",
		Description:    "study 5: c3 LIKE '%marker%' over the key range 1-10 of tab72 (no row matches); reported per thousand-query",
		Dataset:        "tab72",
		Tag:            tab72Tag,
		DefaultClients: 4,
		New:            func() Workload { return loop{sql: tab72RangeSQL} },
	})
}

// pointLookup runs one prepared statement with a random key from 1 to keys.
type pointLookup struct {
	sql  string
	keys int
}

func (w pointLookup) Worker(ctx context.Context, conn Conn, session int) (Op, error) {
	stmt, err := conn.Prepare(ctx, w.sql)
	if err != nil {
		return nil, err
	}
	// A seed per session: reproducible, and sessions read different keys.
	r := rand.New(rand.NewPCG(uint64(session), 72))
	return func(ctx context.Context) error { return stmt.Exec(ctx, 1+r.IntN(w.keys)) }, nil
}

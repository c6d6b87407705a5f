package workload

import "context"

// creditTop1SQL is study 1's query: the first row of a join of payment and
// member, run in a tight loop. TOP 1 becomes LIMIT 1. The trailing comment is
// the workload's tag.
const creditTop1SQL = "SELECT m.member_no, m.lastname, p.payment_no, p.payment_dt, p.payment_amt " +
	"FROM payment p JOIN member m ON m.member_no = p.member_no LIMIT 1 /* obsbench-credit-top1 */"

func init() {
	Register(Meta{
		Name:           "credit-top1",
		Description:    "study 1: SELECT the first row of payment JOIN member in a loop, read-only and CPU-bound",
		Dataset:        "credit",
		Tag:            "obsbench-credit-top1",
		DefaultClients: 16,
		New:            func() Workload { return loop{sql: creditTop1SQL} },
	})
}

// loop runs one prepared statement without parameters over and over.
type loop struct{ sql string }

func (l loop) Worker(ctx context.Context, conn Conn, _ int) (Op, error) {
	stmt, err := conn.Prepare(ctx, l.sql)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return stmt.Exec(ctx) }, nil
}

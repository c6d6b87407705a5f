package sqlserver

import (
	"context"

	"github.com/obsbench/obsbench/internal/workload"
)

// WorkloadStatements are the statements one session of wl sends, in the
// T-SQL the server receives: what --dry-run prints, and the golden file
// of workloads. It runs the workload's session set-up against a recorder,
// never a server.
func WorkloadStatements(ctx context.Context, wl workload.Meta) ([]string, error) {
	r := &recorder{}
	if _, err := wl.New().Worker(ctx, r, 0); err != nil {
		return nil, err
	}
	out := make([]string, len(r.sql))
	for i, st := range r.sql {
		out[i] = Translate(st)
	}
	return out, nil
}

// recorder is a workload.Conn that records what a session prepares.
type recorder struct{ sql []string }

func (r *recorder) Prepare(_ context.Context, sql string) (workload.Stmt, error) {
	r.sql = append(r.sql, sql)
	return noStmt{}, nil
}

type noStmt struct{}

func (noStmt) Exec(context.Context, ...any) error { return nil }

package workload

import (
	"context"
	"fmt"
)

// Study 4's workloads: single-int rows inserted one per transaction, or in
// explicit transactions of many. The table is the workloads' own (set-up
// creates it; it grows run by run, as the study's did), so that no dataset
// has to be loaded.
const (
	insertsTag      = "obsbench-inserts"
	insertsTableSQL = "CREATE TABLE IF NOT EXISTS obsbench_inserts (v bigint NOT NULL)"
	insertSQL       = "INSERT INTO obsbench_inserts (v) VALUES ($1) /* " + insertsTag + " */"
)

func init() {
	Register(Meta{
		Name:           "inserts-autocommit",
		Description:    "study 4: INSERT one int row per statement, each its own transaction (every commit waits for the log flush)",
		Dataset:        "none",
		Tag:            insertsTag,
		Setup:          []string{insertsTableSQL},
		DefaultClients: 1,
		New:            func() Workload { return inserts{batch: 1} },
	})
	Register(Meta{
		Name:           "inserts-batched",
		Description:    "study 4: the same INSERTs in explicit transactions of --batch rows (one commit per batch)",
		Dataset:        "none",
		Tag:            insertsTag,
		Setup:          []string{insertsTableSQL},
		DefaultClients: 1,
		Params: []Param{{Name: "batch", Default: 10000, Min: 1, Max: 10_000_000,
			Usage: "inserts-batched: rows per transaction"}},
		Build: func(p map[string]int) Workload { return inserts{batch: p["batch"]} },
	})
}

// inserts runs one INSERT per operation; with batch > 1, the operation that
// completes a batch also commits it and opens the next transaction, so its
// latency holds the commit's wait.
type inserts struct{ batch int }

func (w inserts) Worker(ctx context.Context, conn Conn, session int) (Op, error) {
	ins, err := conn.Prepare(ctx, insertSQL)
	if err != nil {
		return nil, err
	}
	// Each session's values are its own range: rows are distinct across
	// sessions and runs of a session start again, which the table allows.
	next := int64(session) * 1_000_000_000
	if w.batch <= 1 {
		return func(ctx context.Context) error {
			next++
			return ins.Exec(ctx, next)
		}, nil
	}
	begin, err := conn.Prepare(ctx, "BEGIN")
	if err != nil {
		return nil, err
	}
	commit, err := conn.Prepare(ctx, "COMMIT")
	if err != nil {
		return nil, err
	}
	if err := begin.Exec(ctx); err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	inBatch := 0
	return func(ctx context.Context) error {
		next++
		if err := ins.Exec(ctx, next); err != nil {
			return err
		}
		if inBatch++; inBatch < w.batch {
			return nil
		}
		inBatch = 0
		if err := commit.Exec(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return begin.Exec(ctx)
	}, nil
}

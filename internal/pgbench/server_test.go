package pgbench_test

import (
	"context"
	"testing"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/pgbench"
)

// pgbench's tpcb-like, run by obsbench's client in its own sessions over
// the tables pgbench -i makes, keeps TPC-B's invariant: every balance
// change is in the history, and the accounts, tellers and branches moved
// by the same total. A \gset script reads a row back into a variable.
func TestTpcbLikeOnARealServer(t *testing.T) {
	ctx := context.Background()
	pg := servertest.Postgres(t)
	pgbench.InitWithPgbench(t, pg, 1)
	dsn := pg.DSN("postgres")
	s := postgres.New(dsn, postgres.Options{})
	tpcb, err := pgbench.Builtin("tpcb-like")
	if err != nil {
		t.Fatal(err)
	}
	gset, err := pgbench.ParseScript("gset.sql", "\\set aid random(1, 100000 * :scale)\nSELECT aid AS got, abalance FROM pgbench_accounts WHERE aid = :aid \\gset r_\nSELECT :r_got + 0 WHERE :r_got = :aid;\n")
	if err != nil {
		t.Fatal(err)
	}
	const sessions, ops = 4, 600
	done := make(chan error, sessions)
	for id := 0; id < sessions; id++ {
		go func(id int) {
			sess, err := s.Connect(ctx)
			if err != nil {
				done <- err
				return
			}
			defer sess.Close(ctx)
			c, err := pgbench.NewClient(sess, []pgbench.Weighted{{Script: tpcb, Weight: 3}, {Script: gset, Weight: 1}},
				map[string]string{"scale": "1", "default_seed": "5"}, id, uint64(id+1), "obsbench-pgbench-test")
			if err != nil {
				done <- err
				return
			}
			for i := 0; i < ops; i++ {
				if err := c.Op(ctx); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}(id)
	}
	for i := 0; i < sessions; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	conn := servertest.Connect(ctx, t, dsn)
	defer conn.Close(ctx)
	var history, n, accounts, tellers, branches int64
	err = conn.QueryRow(ctx, `SELECT (SELECT coalesce(sum(delta), 0) FROM pgbench_history), (SELECT count(*) FROM pgbench_history),
		(SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(bbalance) FROM pgbench_branches)`).
		Scan(&history, &n, &accounts, &tellers, &branches)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || accounts != history || tellers != history || branches != history {
		t.Errorf("after %d transactions: history %d, accounts %d, tellers %d, branches %d; want all equal", n, history, accounts, tellers, branches)
	}
	// 7 statements per tpcb-like transaction, 2 per \gset one, 3 to 1:
	// about 300 transactions committed.
	if n < 200 {
		t.Errorf("%d tpcb-like transactions committed in %d operations; want about 300", n, sessions*ops)
	}
}

// obsbench's pgbench dataset is pgbench -i's tables: the same columns and
// types, row counts and keys, at scale 2.
func TestDatasetIsPgbenchInit(t *testing.T) {
	ctx := context.Background()
	pg := servertest.Postgres(t)
	pgbench.InitWithPgbench(t, pg, 2)
	dsn := pg.DSN("obsbench")
	if err := postgres.CreateDatabase(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Scaled("pgbench", 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.New(dsn, postgres.Options{}).Load(ctx, ds); err != nil {
		t.Fatal(err)
	}
	describe := func(dsn string) map[string]string {
		conn := servertest.Connect(ctx, t, dsn)
		defer conn.Close(ctx)
		out := map[string]string{}
		for _, q := range []struct{ table, key, sums string }{
			{"pgbench_branches", "bid", "sum(bid), sum(bbalance)"},
			{"pgbench_tellers", "tid", "sum(tid), sum(bid), sum(tbalance)"},
			{"pgbench_accounts", "aid", "sum(aid), sum(bid), sum(abalance)"},
		} {
			var cols, figures string
			err := conn.QueryRow(ctx, `SELECT string_agg(column_name || ' ' || data_type || coalesce('(' || character_maximum_length || ')', ''), ', ' ORDER BY ordinal_position)
				FROM information_schema.columns WHERE table_name = $1 AND table_schema = current_schema()`, q.table).Scan(&cols)
			if err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRow(ctx, "SELECT concat_ws(' ', count(*), "+q.sums+") FROM "+q.table).Scan(&figures); err != nil {
				t.Fatal(err)
			}
			out[q.table] = cols + " | " + figures
		}
		return out
	}
	want, got := describe(pg.DSN("postgres")), describe(dsn)
	for table, w := range want {
		if got[table] != w {
			t.Errorf("%s: obsbench's\n  %s\npgbench -i's\n  %s", table, got[table], w)
		}
	}
}

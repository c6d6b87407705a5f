package postgres_test

import (
	"context"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// dss-mix on PostgreSQL (servertest.DSSMix).
func TestDSSMix(t *testing.T) {
	pg := servertest.Postgres(t)
	dsn := pg.DSN("obsbench")
	if err := postgres.CreateDatabase(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	s := postgres.New(dsn, postgres.Options{})
	servertest.DSSMix(t, s, workload.PostgreSQL, servertest.DSSQueries{
		Mismatched: "SELECT count(*)::text FROM dss_orders o WHERE o.total <> (SELECT sum(l.quantity * l.price) FROM dss_order_line l WHERE l.order_id = o.order_id)",
		Sum:        "SELECT sum(total)::text FROM dss_orders",
		Query:      func(t *testing.T, sql string) string { return query(t, s, sql) },
	})
}

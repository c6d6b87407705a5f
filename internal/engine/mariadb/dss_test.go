package mariadb_test

import (
	"testing"

	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// dss-mix on MariaDB (servertest.DSSMix): every query runs with the same
// text as on PostgreSQL.
func TestDSSMix(t *testing.T) {
	m := servertest.MariaDB(t, nil)
	s, err := mariadb.New(m.DSN("obsbench"), mariadb.Options{Password: m.Password()})
	if err != nil {
		t.Fatal(err)
	}
	servertest.DSSMix(t, s, workload.MariaDB, servertest.DSSQueries{
		Mismatched: "SELECT COUNT(*) FROM obsbench.dss_orders o WHERE o.total <> (SELECT SUM(l.quantity * l.price) FROM obsbench.dss_order_line l WHERE l.order_id = o.order_id)",
		Sum:        "SELECT SUM(total) FROM obsbench.dss_orders",
		Query:      func(t *testing.T, sql string) string { return query(t, m, sql) },
	})
}

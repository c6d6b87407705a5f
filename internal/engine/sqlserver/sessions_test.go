package sqlserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine"
)

// Compile-time: workers can open SQL Server sessions.
var (
	_ engine.SessionServer = (*external)(nil)
	_ engine.SessionOpener = Engine{}
)

// A worker's sessions go where the coordinator's own would: the DSN as
// given (its password and options kept) and the dataset's database. No
// SQL Server runs here: the dialer is checked to reach for the address
// it was given and to fail as a session of the coordinator fails.
func TestSessionsForWorkers(t *testing.T) {
	const dsn = "sqlserver://sa:pw%40x@127.0.0.1:1?encrypt=disable&dial+timeout=1"
	srv, err := New(dsn, Options{Database: engine.Home})
	if err != nil {
		t.Fatal(err)
	}
	a := (&external{Server: srv}).SessionAddress()
	dial, err := Engine{}.Sessions(a)
	if err != nil {
		t.Fatal(err)
	}
	again, err := New(a.DSN, Options{Database: engine.Home})
	if err != nil || again.dsn.String() != srv.dsn.String() || again.database != srv.database {
		t.Errorf("a worker's server: %v, %v; want the coordinator's %v, database %q", again, err, srv.dsn, srv.database)
	}
	if u := again.dsn.User; u.Username() != "sa" || func() string { p, _ := u.Password(); return p }() != "pw@x" {
		t.Errorf("the worker's DSN lost its credentials: %v", u)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, werr := dial(ctx)
	_, cerr := srv.Connect(ctx)
	if werr == nil || cerr == nil || !strings.Contains(werr.Error(), "connect to sqlserver") {
		t.Errorf("nothing listens on 127.0.0.1:1: the worker's session gave %v, the coordinator's %v; want both to fail to connect", werr, cerr)
	}
	if _, err := (Engine{}).Sessions(engine.SessionAddress{DSN: "postgres://x"}); !errors.Is(err, ErrDSN) {
		t.Errorf("a DSN that is not SQL Server's: %v; want %v", err, ErrDSN)
	}
}

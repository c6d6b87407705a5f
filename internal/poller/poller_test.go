package poller_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/poller"
)

// A poller against a real server: its sessions send every query at each
// multiple of the interval, the server sees them, a query the server
// refuses fails Start, and Stop closes the sessions.
func TestPollerPollsARealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	ctx := context.Background()
	pg := servertest.Postgres(t)
	s := postgres.New(pg.DSN("postgres"), postgres.Options{})
	spec := observer.Poller{Interval: "200ms", Sessions: 2, Queries: []string{
		"SELECT count(*) FROM pg_stat_activity", "SELECT /* obsbench-poller-test */ datname, xact_commit FROM pg_stat_database"}}
	start := time.Now()
	p, err := poller.Start(ctx, s.Dial, spec)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		seen = max(seen, pollers(t, pg))
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	// 2 sessions, one poll each at Start and one at each multiple of
	// 200 ms on the clock until Stop (the loop above takes longer than its
	// second on a busy machine); a loaded machine may miss some.
	ticks := int64(time.Since(start) / (200 * time.Millisecond))
	if got := p.Polls(); got < ticks || got > 2*(ticks+2) {
		t.Errorf("%d polls of 2 sessions every 200 ms over %d multiples of 200 ms; want %d to %d", got, ticks, ticks, 2*(ticks+2))
	}
	if seen < 2 {
		t.Errorf("the server saw at most %d poller sessions at once; want 2", seen)
	}
	if n := pollers(t, pg); n != 0 {
		t.Errorf("%d poller sessions left after Stop", n)
	}

	bad := observer.Poller{Interval: "1s", Queries: []string{"SELECT * FROM no_such_view"}}
	if _, err := poller.Start(ctx, s.Dial, bad); err == nil || !strings.Contains(err.Error(), "no_such_view") {
		t.Errorf("Start with a query the server refuses: %v; want its error", err)
	}
}

// pollers is how many sessions have sent the test's poll query.
func pollers(t *testing.T, pg *postgres.Instance) int {
	t.Helper()
	ctx := context.Background()
	conn, err := postgres.New(pg.DSN("postgres"), postgres.Options{}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, rows, err := conn.QueryText(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%obsbench-poller-test%' AND pid <> pg_backend_pid()")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0][0] == nil {
		t.Fatalf("count of sessions: %v", rows)
	}
	n, err := strconv.Atoi(*rows[0][0])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

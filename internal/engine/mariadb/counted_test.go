package mariadb_test

import (
	"database/sql"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/poll"
)

// A MariaDB restarted under the counter counts, per lifetime, what its
// threads spent serving client commands apart from the rest. Two
// lifetimes that differ by a session's 1000 statements differ by the same
// count each time, to 0.3% (closer on an idle machine: docs/method.md
// says what still moves it). Switched off, the next lifetime has no
// count.
func TestCountInstructionsMariaDB(t *testing.T) {
	ctx, m := servertest.StartMariaDB(t, 6*time.Minute)
	if err := m.CountInstructions(true); err != nil {
		t.Fatal(err)
	}
	// Under valgrind the server may not take a connection yet when its
	// socket is there (EAGAIN on a busy machine): open waits for it.
	open := func() *sql.DB {
		t.Helper()
		db := servertest.Open(t, m.Config("mysql"))
		var ping error
		if err := poll.Until(ctx, time.Minute, 200*time.Millisecond, func() (bool, error) {
			ping = db.PingContext(ctx)
			return ping == nil, nil
		}, func() error { return fmt.Errorf("the counted server takes no connection within a minute: %w", ping) }); err != nil {
			t.Fatal(err)
		}
		return db
	}
	session := func(n int) {
		t.Helper()
		db := open()
		defer db.Close()
		db.SetMaxOpenConns(1)
		st, err := db.PrepareContext(ctx, "SELECT COUNT(*) FROM mysql.global_priv WHERE LENGTH(Priv) >= ?")
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var k int
		for i := range n {
			if err := st.QueryRowContext(ctx, i%3).Scan(&k); err != nil {
				t.Fatal(err)
			}
		}
	}
	// lifetime runs a warm session and one of n statements on the
	// server restarted under the counter before it, and returns the
	// count of that life; its ending restart starts the next one under
	// the counter.
	lifetime := func(n int) mariadb.Tally {
		t.Helper()
		session(50)
		session(n)
		if err := m.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		tally, err := m.LastTally()
		if err != nil {
			t.Fatal(err)
		}
		if tally.Commands() == 0 || tally.Rest == 0 {
			t.Fatalf("tally %+v; want both parts counted", tally)
		}
		// Split at each connection's end: the two sessions', then what
		// came after the last (nothing served: no connection was open).
		var sum uint64
		for _, c := range tally.Connections {
			sum += c
		}
		if k := len(tally.Connections); k < 3 || sum != tally.Commands() || tally.Connections[k-1] != 0 {
			t.Fatalf("commands %d split at connection ends as %v; want both sessions' parts, then 0, adding up", tally.Commands(), tally.Connections)
		}
		return tally
	}
	// Under the counter nothing left to timing decides a session's path:
	// no buffer pool loaded behind its back, no cached threads, one table
	// cache instance, pages made young by order of access alone.
	m.ShiftStack(100)
	if err := m.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if pid, err := m.PID(); err != nil {
		t.Fatal(err)
	} else {
		servertest.StackShifted(t, pid, 100)
	}
	func() {
		db := open()
		defer db.Close()
		var load, old, threads, instances int
		if err := db.QueryRowContext(ctx, "SELECT @@innodb_buffer_pool_load_at_startup, @@innodb_old_blocks_time, @@thread_cache_size, @@table_open_cache_instances").
			Scan(&load, &old, &threads, &instances); err != nil {
			t.Fatal(err)
		}
		if load != 0 || old != 0 || threads != 0 || instances != 1 {
			t.Errorf("counted server: buffer pool load at start-up %d, old blocks time %d, thread cache %d, table cache instances %d; want 0, 0, 0, 1",
				load, old, threads, instances)
		}
	}()
	if err := m.Restart(ctx); err != nil { // ends the life that answered the query above
		t.Fatal(err)
	}
	if _, err := m.LastTally(); err != nil {
		t.Fatal(err)
	}
	var per [2]float64
	for i := range per {
		short, long := lifetime(100), lifetime(1100)
		per[i] = (float64(long.Commands()) - float64(short.Commands())) / 1000
		// The session of n statements is the last connection: its part
		// alone differs by the same 1000 statements. To 10%, not to the
		// lifetimes' 0.3%: what the warm session before it meets of the
		// server's first-time work moves with timing, and on a busy
		// machine the two lifetimes' warm sessions differed by 3% of the
		// measured work. A split at the wrong place would be off by whole
		// sessions: the part of the warm one, or of none, differs by
		// nothing.
		last := func(t mariadb.Tally) float64 { return float64(t.Connections[len(t.Connections)-2]) }
		if d := (last(long) - last(short)) / 1000; math.Abs(d-per[i])/per[i] > 0.1 {
			t.Errorf("the sessions' own parts differ by %.1f instructions a statement, the lifetimes by %.1f: want the same to 10%%", d, per[i])
		}
		t.Logf("lifetimes of 100 and 1100 statements: commands %d and %d, rest %d and %d", short.Commands(), long.Commands(), short.Rest, long.Rest)
	}
	t.Logf("instructions per statement: %.1f, then %.1f", per[0], per[1])
	if per[0] <= 0 || math.Abs(per[0]-per[1])/per[0] > 0.003 {
		t.Errorf("1000 more statements cost %.1f, then %.1f instructions each: want the same to 0.3%%", per[0], per[1])
	}
	if _, err := m.LastTally(); err == nil {
		t.Error("a tally read twice; want an error the second time")
	}
	if err := m.CountInstructions(false); err != nil {
		t.Fatal(err)
	}
	session(10)
	if err := m.Restart(ctx); err != nil { // ends a counted lifetime
		t.Fatal(err)
	}
	if _, err := m.LastTally(); err != nil {
		t.Errorf("the last counted lifetime: %v", err)
	}
	if err := m.Restart(ctx); err != nil { // ends an uncounted one
		t.Fatal(err)
	}
	if tally, err := m.LastTally(); err == nil {
		t.Errorf("a lifetime after the counter was switched off has a tally %+v", tally)
	}
}

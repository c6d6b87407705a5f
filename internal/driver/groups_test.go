package driver_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/workload"
)

// groupConn is a session that notes the statements it ran as text and
// the workload session (stream) it was given; its statements take no
// time.
type groupConn struct {
	mu     sync.Mutex
	sqls   []string
	stream int
}

func (c *groupConn) Prepare(context.Context, string) (workload.Stmt, error) { return nopStmt{}, nil }
func (c *groupConn) ExecSQL(_ context.Context, sql string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sqls = append(c.sqls, sql)
	return nil
}
func (c *groupConn) Close(context.Context) error { return nil }

type nopStmt struct{}

func (nopStmt) Exec(context.Context, ...any) error { time.Sleep(100 * time.Microsecond); return nil }

// streamWorkload gives each session a statement that does nothing, and
// notes its session number on its connection.
type streamWorkload struct{}

func (streamWorkload) Worker(ctx context.Context, conn workload.Conn, session int) (workload.Op, error) {
	conn.(*groupConn).stream = session
	st, _ := conn.Prepare(ctx, "")
	return func(ctx context.Context) error { return st.Exec(ctx) }, nil
}

// A run in groups takes its sessions in turn (session i in group i % 2):
// each group's sessions, and only those, run its statements; the k-th
// session of each group runs the same workload session; each group's
// result is its sessions', and the groups' counts add up to the whole's.
func TestGroups(t *testing.T) {
	var mu sync.Mutex
	var conns []*groupConn
	dial := func(context.Context) (driver.Session, error) {
		c := &groupConn{}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		return c, nil
	}
	cfg := driver.Config{Clients: 6, Warmup: 100 * time.Millisecond, Duration: 500 * time.Millisecond, Goroutines: true,
		Groups: 2, GroupSQL: [][]string{nil, {"SET a TO '1'", "SET b TO '2'"}}}
	res, err := driver.Run(context.Background(), cfg, dial, streamWorkload{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Groups) != 2 {
		t.Fatalf("%d groups; want 2", len(res.Groups))
	}
	var streams [2][]int
	for _, c := range conns {
		// Dialed at once, sessions are numbered by their stream and
		// group: the one that ran statements is in group 1.
		g := 0
		if len(c.sqls) > 0 {
			g = 1
			if !slices.Equal(c.sqls, cfg.GroupSQL[1]) {
				t.Errorf("a session of group 1 ran %q; want %q", c.sqls, cfg.GroupSQL[1])
			}
		}
		streams[g] = append(streams[g], c.stream)
	}
	for g := range streams {
		slices.Sort(streams[g])
		if !slices.Equal(streams[g], []int{0, 1, 2}) {
			t.Errorf("group %d ran workload sessions %v; want 0, 1 and 2, as the other group", g, streams[g])
		}
	}
	var measured, executed int64
	for g, r := range res.Groups {
		if r.Clients != 3 || len(r.PerSecond) != 3 || r.Measured == 0 {
			t.Errorf("group %d: %d sessions, %d rows, %d measured; want 3 sessions measured", g, r.Clients, len(r.PerSecond), r.Measured)
		}
		measured, executed = measured+r.Measured, executed+r.Executed
	}
	if measured != res.Measured || executed != res.Executed {
		t.Errorf("groups measured %d and executed %d; the whole %d and %d", measured, executed, res.Measured, res.Executed)
	}
}

package counting

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/workload"
)

// splitServer is a fakeServer whose backends also count each statement
// apart, as a server under callgrind split at each statement's start:
// the first part is the backend's start-up, the last holds its exit too.
// Query 1 costs three times query 0, and an observer adds its share to
// both.
type splitServer struct {
	*fakeServer
	parts map[int][]uint64
	split bool
	extra int // statements each operation runs beyond its one
}

const fakeExit = 700_000

func (s *splitServer) SplitStatements(on bool)          { s.split = on }
func (s *splitServer) StatementCounts(pid int) []uint64 { return s.parts[pid] }

func (s *splitServer) Dial(ctx context.Context) (driver.Session, error) {
	sess, err := s.fakeServer.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return &splitBackend{fakeBackend: sess.(*fakeBackend), srv: s}, nil
}

func (s *splitServer) BackendPID(ctx context.Context, sess driver.Session) (int, error) {
	return s.fakeServer.BackendPID(ctx, sess.(*splitBackend).fakeBackend)
}

type splitBackend struct {
	*fakeBackend
	srv     *splitServer
	queries []int
}

// Close ends the backend: its whole count, and its parts.
func (b *splitBackend) Close(ctx context.Context) error {
	f := b.srv.fakeServer
	f.mu.Lock()
	pid := 0
	for p, x := range f.live {
		if x == b.fakeBackend {
			pid = p
		}
	}
	per := f.perStmt[f.current]
	parts := []uint64{fakeStartup}
	for _, q := range b.queries {
		parts = append(parts, uint64(per*float64(1+2*q)))
		for range b.srv.extra {
			parts = append(parts, 10)
		}
	}
	parts[len(parts)-1] += fakeExit
	if f.counted && b.srv.split {
		b.srv.parts[pid] = parts
	}
	f.mu.Unlock()
	return b.fakeBackend.Close(ctx)
}

// twoQueries alternates two named statements, 0 and 1.
type twoQueries struct{}

func (twoQueries) Worker(_ context.Context, conn workload.Conn, _ int) (workload.Op, error) {
	b := conn.(*splitBackend)
	return func(ctx context.Context) error {
		q := len(b.queries) % 2
		b.queries = append(b.queries, q)
		b.statements++
		if c := workload.Clocked(ctx); c != nil {
			c.Statement = q
		}
		return nil
	}, nil
}

// Each query's counted executions are its statements' parts of the
// measured backend's count, matched from the end, the session's last
// statement left out (its part holds the exit): query 1 counts three
// times query 0, the observer's change is its 1% on both; the baseline
// has no change.
func TestRunCountsQueriesApart(t *testing.T) {
	s := &splitServer{fakeServer: newFake(), parts: map[int][]uint64{}}
	obs := []observer.Observer{{Name: "baseline"}, {Name: "obs"}}
	samples, err := Run(context.Background(), Config{Server: s, Workload: twoQueries{}, Observers: obs,
		Statements: 11, Warmup: 4, Rounds: 2, Seed: 1, Queries: []string{"q0", "q1"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.split {
		t.Error("the server still splits statements after the run")
	}
	for _, smp := range samples {
		per := s.perStmt[smp.Condition]
		want := []QueryCount{{"q0", 5, per}, {"q1", 5, 3 * per}} // 11 counted, the last (q0) left out
		if len(smp.Queries) != 2 || smp.Queries[0] != want[0] || smp.Queries[1] != want[1] {
			t.Errorf("%s round %d: queries %+v; want %+v", smp.Condition, smp.Round, smp.Queries, want)
		}
	}
	conds := Summarize([]string{"baseline", "obs"}, samples, 0)
	for _, q := range conds[1].Queries {
		if c := q.Change; c == nil || math.Abs(c.Pct-1) > 1e-9 || c.Pairs != 2 {
			t.Errorf("obs %s: change %+v; want +1%% over 2 pairs", q.Name, c)
		}
	}
	if b := conds[0].Queries; len(b) != 2 || b[0].Change != nil || b[1].PerExec != 3000 || b[1].Executions != 5 {
		t.Errorf("baseline queries %+v; want q0 and q1 at 1000 and 3000, no change", b)
	}

	// Operations of more than one statement cannot be matched to parts.
	s = &splitServer{fakeServer: newFake(), parts: map[int][]uint64{}, extra: 1}
	_, err = Run(context.Background(), Config{Server: s, Workload: twoQueries{}, Observers: obs,
		Statements: 11, Warmup: 4, Rounds: 1, Seed: 1, Queries: []string{"q0", "q1"}})
	if err == nil || !strings.Contains(err.Error(), "one per operation") {
		t.Errorf("two statements per operation: %v; want refused", err)
	}
	// A server that cannot split is refused before anything runs.
	if _, err := Run(context.Background(), Config{Server: newFake(), Workload: oneStatement{}, Observers: obs,
		Statements: 10, Rounds: 1, Queries: []string{"q0"}}); err == nil {
		t.Error("a server that does not count statements apart: no error")
	}
}

package analysis

import (
	"math"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// Per-statement latencies pool over runs: counts add up, the mean is
// weighted by them, and a statement only a later run ran is added.
func TestPoolStatements(t *testing.T) {
	sl := func(name string, n int64, ms float64) result.StatementLatency {
		return result.StatementLatency{Statement: name, Count: n, MeanMS: ms}
	}
	var pool []result.StatementLatency
	pool = poolStatements(pool, []result.StatementLatency{sl("s1", 100, 1.0), sl("s2", 0, 0)})
	pool = poolStatements(pool, []result.StatementLatency{sl("s1", 300, 2.0), sl("s3", 10, 5.0)})
	want := []result.StatementLatency{sl("s1", 400, 1.75), sl("s2", 0, 0), sl("s3", 10, 5.0)}
	if len(pool) != len(want) {
		t.Fatalf("pool = %+v; want %+v", pool, want)
	}
	for i := range want {
		if pool[i].Statement != want[i].Statement || pool[i].Count != want[i].Count || math.Abs(pool[i].MeanMS-want[i].MeanMS) > 1e-9 {
			t.Errorf("pool[%d] = %+v; want %+v", i, pool[i], want[i])
		}
	}
}

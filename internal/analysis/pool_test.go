package analysis

import (
	"math"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// Per-statement latencies pool over runs: counts add up, the mean is
// weighted by them, and a statement only a later run ran is added. Server
// CPU pools the same way, over the executions whose CPU was read.
func TestPoolStatements(t *testing.T) {
	sl := func(name string, n int64, ms float64) result.StatementLatency {
		return result.StatementLatency{Statement: name, Count: n, MeanMS: ms}
	}
	var pool []result.StatementLatency
	pool = poolStatements(pool, []result.StatementLatency{sl("s1", 100, 1.0), sl("s2", 0, 0)})
	pool = poolStatements(pool, []result.StatementLatency{sl("s1", 300, 2.0), sl("s3", 10, 5.0)})
	want := []result.StatementLatency{sl("s1", 400, 1.75), sl("s2", 0, 0), sl("s3", 10, 5.0)}
	withCPU := func(n int64, ms float64) []result.StatementLatency {
		st := sl("s1", 10, 1)
		st.CPUCount, st.CPUMeanMS = n, ms
		return []result.StatementLatency{st}
	}
	cpu := poolStatements(poolStatements(nil, withCPU(10, 0.5)), withCPU(30, 1.5))
	if cpu[0].CPUCount != 40 || math.Abs(cpu[0].CPUMeanMS-1.25) > 1e-9 {
		t.Errorf("server CPU pooled to %d at %v ms; want 40 at 1.25", cpu[0].CPUCount, cpu[0].CPUMeanMS)
	}
	if len(pool) != len(want) {
		t.Fatalf("pool = %+v; want %+v", pool, want)
	}
	for i := range want {
		if pool[i].Statement != want[i].Statement || pool[i].Count != want[i].Count || math.Abs(pool[i].MeanMS-want[i].MeanMS) > 1e-9 {
			t.Errorf("pool[%d] = %+v; want %+v", i, pool[i], want[i])
		}
	}
}

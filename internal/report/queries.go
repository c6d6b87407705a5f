package report

import (
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/result"
)

// queryCounts prints the queries counted apart (--count-per-query), if
// any: a line per query, the baseline's instructions per execution and
// each observer's change against it, % [95% CI] paired by round, so that
// an observer's cost shows on the queries it weighs on.
func queryCounts(w io.Writer, conds []result.CountedCondition) {
	if len(conds) == 0 || len(conds[0].Queries) == 0 {
		return
	}
	fmt.Fprintln(w)
	notef(w, "per query: the session's instructions per execution, from its start to the next statement's (each session's last statement left out: its count holds the session's end too); change %% [95%% CI] against the baseline, paired by round")
	t := columns{head: []string{"query", "executions/run", "baseline instr/exec"}, left: []bool{true}}
	for _, c := range conds[1:] {
		t.head = append(t.head, c.Name)
	}
	for _, q := range conds[0].Queries {
		row := []string{shortStatement(q.Name), fmt.Sprint(q.Executions), thousands(q.PerExec)}
		for _, c := range conds[1:] {
			row = append(row, changeText(queryChange(c, q.Name)))
		}
		t.add(row...)
	}
	t.writeFitted(w, 1)
}

// queryChange is condition c's change on query name, nil if it has none.
func queryChange(c result.CountedCondition, name string) *result.CountChange {
	for _, q := range c.Queries {
		if q.Name == name {
			return q.Change
		}
	}
	return nil
}

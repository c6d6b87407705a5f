package report

import (
	"fmt"
	"io"
	"text/tabwriter"

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
	fmt.Fprintln(w, "\nper query: the session's instructions per execution, from its start to the next statement's (each session's last statement left out: its count holds the session's end too); change % [95% CI] against the baseline, paired by round")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "query\texecutions/run\tbaseline instr/exec")
	for _, c := range conds[1:] {
		fmt.Fprintf(tw, "\t%s", c.Name)
	}
	fmt.Fprintln(tw, "\t")
	for _, q := range conds[0].Queries {
		fmt.Fprintf(tw, "%s\t%d\t%s", shortStatement(q.Name), q.Executions, thousands(q.PerExec))
		for _, c := range conds[1:] {
			fmt.Fprintf(tw, "\t%s", changeText(queryChange(c, q.Name)))
		}
		fmt.Fprintln(tw, "\t")
	}
	tw.Flush()
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

package counting

import (
	"fmt"
	"io"
	"time"

	"github.com/obsbench/obsbench/internal/spec"
)

// PrintPlan prints, for a dry run, the counted runs of a plan: each of
// conditions counted rounds times as cnt says, after prefix
// (longStatements: the workload's statements are long, so a run's time
// cannot be told). It returns about how long they take, 0 where it
// cannot tell.
func PrintPlan(w io.Writer, cnt spec.Count, conditions, rounds int, longStatements bool, prefix string) time.Duration {
	runs := conditions * rounds
	servers := ServersFor(rounds)
	// Each server counts whole rounds: the one with the most sets the time.
	counted := planSetup + time.Duration((rounds+servers-1)/servers*conditions)*planRunTime
	each, took := "", fmt.Sprintf("about %v a run", planRunTime)
	if cnt.Sessions > 1 {
		each = fmt.Sprintf(" in each of %d sessions at once", cnt.Sessions)
	}
	if cnt.Shrink > 0 {
		each += fmt.Sprintf(", the dataset shrunk to 1/%d of its rows", cnt.Shrink)
	}
	if longStatements {
		took = "a run's time depends on the mix's statements: not in the estimate"
		counted = 0
	}
	fmt.Fprintf(w, "%s%d conditions x %d rounds = %d runs of %d statements after %d%s, the server under valgrind, on %d server(s) at once (%s)\n",
		prefix, conditions, rounds, runs, cnt.Statements, cnt.Warmup, each, servers, took)
	if cnt.Width > 0 && rounds >= MinPlanRounds {
		fmt.Fprintf(w, "  then up to %d more rounds of each condition still wider than ±%g point (--count-width), beside the baseline: as many as the first rounds' spread asks for (not in the estimate)\n",
			(MostTimes-1)*rounds, cnt.Width)
	}
	return counted
}

// planRunTime is about how long a counted run of light statements takes
// (mostly the server's restarts under valgrind), and planSetup the
// counted server's start, its dataset and its copies.
const (
	planRunTime = 6 * time.Second
	planSetup   = 15 * time.Second
)

package report

// The user is told how an experiment goes: a line as each run ends and,
// on a terminal, a live status line while a run goes on.

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/obsbench/obsbench/internal/experiment"
)

// Progress prints a line as each run ends. On a terminal it also
// keeps a live status line while a run goes on: the condition and round,
// the run's statements per second over the last second, time elapsed and
// left. Elsewhere (a CI log, a file) it stays quiet between runs.
func Progress(w io.Writer) func(experiment.Progress) {
	live := isTerminal(w)
	var stop chan struct{}
	var done sync.WaitGroup
	return func(p experiment.Progress) {
		if !p.Done {
			if live && p.Executed != nil {
				stop = make(chan struct{})
				done.Add(1)
				go func() {
					defer done.Done()
					statusLine(w, p, stop)
				}()
			}
			return
		}
		if stop != nil {
			close(stop)
			done.Wait()
			stop = nil
		}
		status := fmt.Sprintf("%8.0f stmt/s", p.Run.Driver.Throughput)
		if p.Run.Error != "" {
			status = "FAILED: " + p.Run.Error
		}
		fmt.Fprintf(w, "[%3d/%d] round %d/%d  %-34s %s  (%s elapsed, ~%s left)\n",
			p.Seq, p.Total, p.Round, p.Rounds, p.Condition, status,
			p.Elapsed.Round(time.Second), p.Remaining.Round(time.Second))
	}
}

// statusLine rewrites one terminal line every second until stop closes,
// then clears it.
func statusLine(w io.Writer, p experiment.Progress, stop chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	began, last := time.Now(), p.Executed.Load()
	for {
		select {
		case <-stop:
			fmt.Fprint(w, "\r\033[K")
			return
		case <-t.C:
		}
		n := p.Executed.Load()
		in := time.Since(began)
		fmt.Fprintf(w, "\r\033[K[%3d/%d] round %d/%d  %-34s %8d stmt/s  run %s  (%s elapsed, ~%s left)",
			p.Seq, p.Total, p.Round, p.Rounds, p.Condition, n-last, in.Round(time.Second),
			(p.Elapsed + in).Round(time.Second), max(0, p.Remaining-in).Round(time.Second))
		last = n
	}
}

// isTerminal says whether w is a terminal (not a pipe, a file or
// /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Notes prints notes for the user to w, one line each, marked as
// obsbench's.
func Notes(w io.Writer) func(string, ...any) {
	return func(format string, args ...any) { fmt.Fprintf(w, "obsbench: "+format+"\n", args...) }
}

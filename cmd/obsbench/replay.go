package main

import (
	"flag"
	"fmt"

	"github.com/obsbench/obsbench/internal/replay"
	"github.com/obsbench/obsbench/internal/workload"
)

// replayFlags are the flags that only --workload replay takes.
var replayFlags = []string{"capture", "replay-mode", "replay-speed", "replay-passes"}

// lookupWorkload finds --workload: a registered workload, or a replay of
// --capture.
func lookupWorkload(fs *flag.FlagSet, f runFlags) (workload.Meta, error) {
	if f.workload != "replay" {
		for _, name := range replayFlags {
			if flagSet(fs, name) {
				return workload.Meta{}, usagef("--%s is for --workload replay, not %s", name, f.workload)
			}
		}
		wl, err := workload.Lookup(f.workload)
		if err != nil {
			return wl, usageError{Err: fmt.Errorf("%w, or replay (with --capture)", err)}
		}
		return wl, nil
	}
	if f.capture == "" {
		return workload.Meta{}, usagef("--workload replay needs --capture FILE (made by 'obsbench capture')")
	}
	opts := replay.Options{Mode: replay.Mode(f.replayMode), Speed: f.replaySpeed, Passes: f.replayPasses}
	if err := opts.Check(); err != nil {
		return workload.Meta{}, usageError{Err: err}
	}
	if opts.Mode == replay.Stress && flagSet(fs, "replay-speed") {
		return workload.Meta{}, usagef("--replay-speed paces --replay-mode sync; stress mode sends as fast as the server answers")
	}
	script, err := replay.Load(f.capture)
	if err != nil {
		return workload.Meta{}, usagef("--capture: %v", err)
	}
	if script.Header.Engine != f.engine {
		return workload.Meta{}, usagef("--capture %s was captured on %s: replay it with --engine %s (statements are in its dialect)", f.capture, script.Header.Engine, script.Header.Engine)
	}
	return script.Meta(opts), nil
}

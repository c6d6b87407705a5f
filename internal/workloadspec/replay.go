package workloadspec

import (
	"fmt"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// replayFlags are the settings that only --workload replay takes.
var replayFlags = []string{"capture", "replay-mode", "replay-speed", "replay-passes"}

// Lookup finds s's workload: a registered one, a replay of its capture,
// or the user's scripts (with their record). Every file is read with
// read, and a bad one is an InvalidError naming its flag.
func Lookup(s spec.Spec, read ReadFile) (workload.Meta, []result.Script, error) {
	if err := checkScriptFlags(s); err != nil {
		return workload.Meta{}, nil, err
	}
	if s.Workload == "pgbench" || s.Workload == "sql" {
		for _, name := range replayFlags {
			if s.IsChosen(name) {
				return workload.Meta{}, nil, spec.Invalidf("--%s is for --workload replay, not %s", name, s.Workload)
			}
		}
		return scriptWorkload(s, read)
	}
	wl, err := lookupRegistered(s, read)
	return wl, nil, err
}

// lookupRegistered finds a registered workload or a replay.
func lookupRegistered(s spec.Spec, read ReadFile) (workload.Meta, error) {
	if s.Workload != "replay" {
		for _, name := range replayFlags {
			if s.IsChosen(name) {
				return workload.Meta{}, spec.Invalidf("--%s is for --workload replay, not %s", name, s.Workload)
			}
		}
		wl, err := workload.Lookup(s.Workload)
		if err != nil {
			return wl, spec.InvalidError{Err: fmt.Errorf("%w; or replay (with --capture), pgbench or sql (with --script)", err)}
		}
		return wl, nil
	}
	r := s.Replay
	if r.Capture == "" {
		return workload.Meta{}, spec.Invalidf("--workload replay needs --capture FILE (made by 'obsbench capture')")
	}
	opts := capture.ReplayOptions{Mode: capture.ReplayMode(r.Mode), Speed: r.Speed, Passes: r.Passes}
	if err := opts.Check(); err != nil {
		return workload.Meta{}, spec.InvalidError{Err: err}
	}
	if opts.Mode == capture.Stress && s.IsChosen("replay-speed") {
		return workload.Meta{}, spec.Invalidf("--replay-speed paces --replay-mode sync; stress mode sends as fast as the server answers")
	}
	b, err := read(r.Capture)
	if err != nil {
		return workload.Meta{}, spec.Invalidf("--capture: %v", err)
	}
	script, err := capture.ParseScript(r.Capture, b)
	if err != nil {
		return workload.Meta{}, spec.Invalidf("--capture: %v", err)
	}
	if script.Header.Engine != s.Engine {
		return workload.Meta{}, spec.Invalidf("--capture %s was captured on %s: replay it with --engine %s (statements are in its dialect)", r.Capture, script.Header.Engine, script.Header.Engine)
	}
	return script.Meta(opts), nil
}

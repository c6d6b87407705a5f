package studyrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
)

// defaultCaptureDuration is how long study 2's built-in capture runs its
// mix: a replay of it takes about as long on a baseline server, long
// enough (10 buckets of 5 s) for a transient to be significant.
const defaultCaptureDuration = 60 * time.Second

// captureFile is the built-in capture's name in the study's directory.
const captureFile = "capture.obsc"

// replayStudy runs study 2: it captures a workload (the study's mix with
// the server logging every statement), unless --capture names one, then
// replays it once per run under each observer, in stress mode. Its own
// flags: --capture FILE, --capture-duration D.
func replayStudy(ctx context.Context, st study.Study, s spec.Spec, o Options, out app.Output) error {
	switch {
	case o.CaptureDuration < time.Second || o.CaptureDuration > 24*time.Hour:
		return spec.Invalidf("--capture-duration %v: want 1s to 24h", o.CaptureDuration)
	case s.Rate > 0 || s.LoadPct > 0 || len(s.Loads) > 0:
		return spec.Invalidf("--rate and --load: study %s replays its capture in stress mode, each session's statements as fast as the server answers them, so a fixed arrival rate does not apply", st.Name)
	}
	// --capture names the file to replay instead of the study's capture.
	if s.Replay.Capture != "" {
		o.Capture, s.Replay.Capture = s.Replay.Capture, ""
		s.Unchoose("capture")
	}
	// The capture run is the study's workload on a managed server.
	c, err := app.ResolveIn(s, out)
	if err != nil {
		return err
	}
	if o.Capture == "" && c.DSN != "" {
		return spec.Invalidf("the built-in capture runs on obsbench's managed server: with --dsn, give --capture FILE (made by 'obsbench capture' from the server's log)")
	}
	if s.DryRun {
		return planReplay(ctx, st, s, o, c, out)
	}
	base, capFile := c.Out, o.Capture
	if capFile == "" {
		if err := os.MkdirAll(base, 0o700); err != nil {
			return err
		}
		capFile = filepath.Join(base, captureFile)
		if err := makeCapture(ctx, c, o.CaptureDuration, capFile, out.Stderr); err != nil {
			return fmt.Errorf("capture: %w", err)
		}
	}
	rc, err := app.ResolveIn(replaySpec(s, o, capFile, base), out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out.Stdout, "== %s: replay of %s, %d sessions ==\n", st.Name, capFile, rc.Clients)
	sum, err := rc.Run(ctx, out)
	return rc.Gate(sum, rc.PrintStudy(out.Stdout, sum, err))
}

// replaySpec is the study's replay of capFile, recorded under base: each
// run replays the capture once, in stress mode, with the capture's
// sessions unless --clients says otherwise.
func replaySpec(s spec.Spec, o Options, capFile, base string) spec.Spec {
	rs := s
	rs.Workload, rs.Params = "replay", nil
	rs.Replay = spec.Replay{Capture: capFile, Mode: "stress", Speed: 1, Passes: 1}
	rs.Out = filepath.Join(base, "replay")
	rs.Choose("capture", "replay-passes")
	if !o.User["clients"] {
		rs.Unchoose("clients") // the capture's own sessions
	}
	for name := range s.Params {
		rs.Unchoose(name)
	}
	return rs
}

// planReplay prints the study's plan and starts nothing: the replay's
// where --capture names a file, else the capture it would make first (a
// replay's runs depend on what its capture holds).
func planReplay(ctx context.Context, st study.Study, s spec.Spec, o Options, c app.Experiment, out app.Output) error {
	if o.Capture != "" {
		rc, err := app.ResolveIn(replaySpec(s, o, o.Capture, c.Out), out)
		if err != nil {
			return err
		}
		fmt.Fprintf(out.Stdout, "== %s: replay of %s, %d sessions ==\n", st.Name, o.Capture, rc.Clients)
		return rc.PrintPlan(ctx, out.Stdout)
	}
	fmt.Fprintf(out.Stdout, "dry run: nothing is started\n\n"+
		"study %s: first a capture, workload %s with %d sessions for %v on a managed %s server that logs every statement, into %s;\n"+
		"then each run replays it once, in stress mode, with the capture's sessions: those runs depend on what the capture holds, which a dry run does not make (with --capture FILE it plans the replay of that file)\n",
		st.Name, c.WorkloadMeta().Name, c.Clients, o.CaptureDuration, c.Engine, filepath.Join(c.Out, captureFile))
	return nil
}

// makeCapture runs c's workload for dur on a managed server with capture
// logging on, and turns the server's log into a capture file at path.
func makeCapture(ctx context.Context, c app.Experiment, dur time.Duration, path string, stderr io.Writer) error {
	logf := report.Notes(stderr)
	target, err := c.Open(ctx, engine.Options{Log: logf}, "--dsn")
	if err != nil {
		return err
	}
	defer engine.Close(target, logf)
	capt, ok := target.(engine.Capturer)
	if !ok {
		return spec.Invalidf("no built-in capture on %s", c.Engine)
	}
	obs, source, apps := capt.CaptureObserver()
	if err := engine.Prepare(ctx, target, c.Dialect(), c.WorkloadMeta(), c.Dataset(), logf); err != nil {
		return err
	}
	logf("capture: %s with %d sessions for %v, every statement logged", c.WorkloadMeta().Name, c.Clients, dur)
	run, err := experiment.RunOnce(ctx, experiment.Config{
		Target: target, Workload: c.WorkloadMeta(), Dataset: c.Dataset(), Log: logf,
		Driver: driver.Config{Clients: c.Clients, Duration: dur, Procs: c.DriverThreads},
	}, obs)
	if err != nil {
		return err
	}
	if run.Error != "" {
		return errors.New(run.Error)
	}
	files, err := capt.CapturedLogs()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	ok = false
	defer func() {
		if !ok {
			os.Remove(path) // a wrong capture must not be replayed later
		}
	}()
	w := capture.NewWriter(out, capture.Header{Engine: c.Engine, Source: source, Dataset: c.Dataset().Name, Workload: c.WorkloadMeta().Name, Tag: c.WorkloadMeta().Tag, Scale: c.WorkloadMeta().Value("scale")})
	filter := capture.Filter{Contains: c.WorkloadMeta().Tag, Applications: apps}
	p, err := capture.NewParser(source, filter, w)
	if err != nil {
		out.Close()
		return err
	}
	for _, f := range files {
		if err := parseFile(ctx, p, f); err != nil {
			out.Close()
			return err
		}
	}
	if err := errors.Join(w.Close(), out.Close()); err != nil {
		return err
	}
	stats := p.Stats()
	logf("capture: %d statements of %d sessions in %s (the run executed %d)",
		stats.Statements, stats.Sessions, path, run.Driver.Executed)
	if stats.Statements != run.Driver.Executed {
		return fmt.Errorf("the capture holds %d statements, the run executed %d: the log is incomplete", stats.Statements, run.Driver.Executed)
	}
	ok = true
	return nil
}

func parseFile(ctx context.Context, p *capture.Parser, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return p.Parse(ctx, f, path)
}

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// experimentFile, in a results directory, records how the experiment was
// started, so that --resume can plan exactly the same runs.
const experimentFile = "experiment.json"

// experimentRecord is experiment.json: the experiment's spec, complete
// (its seed drawn, its defaults filled), with the DSN's password removed,
// and the checksums of the user's scripts it runs.
type experimentRecord struct {
	Spec    spec.Spec       `json:"spec"`
	Scripts []result.Script `json:"scripts,omitempty"`
}

// writeExperiment records c in its --out directory.
func writeExperiment(c Experiment) error {
	rec := experimentRecord{Spec: c.Spec, Scripts: c.scripts}
	rec.Spec.DSN, rec.Spec.TwinDSN = engine.RedactDSN(rec.Spec.DSN), engine.RedactDSN(rec.Spec.TwinDSN)
	if c.Method == result.MethodAuto && len(c.splitByDefault) > 0 {
		rec.Spec.Method = "" // auto beside split is chosen again, not given
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(c.Out, experimentFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("record the experiment: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadSpec reads the spec an experiment in dir was started with.
func ReadSpec(dir string) (spec.Spec, error) {
	rec, err := readExperiment(dir)
	return rec.Spec, err
}

func readExperiment(dir string) (experimentRecord, error) {
	if _, err := os.Stat(filepath.Join(dir, report.SweepFile)); err == nil {
		return experimentRecord{}, usagef("--resume %s: a sweep is resumed one session count at a time: --resume %s", dir, filepath.Join(dir, "sessions-N"))
	}
	b, err := os.ReadFile(filepath.Join(dir, experimentFile))
	if err != nil {
		return experimentRecord{}, usagef("--resume %s: %v (only a directory of an experiment started by this version can be resumed)", dir, err)
	}
	var rec experimentRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return experimentRecord{}, usagef("--resume %s: %s: %v", dir, experimentFile, err)
	}
	if rec.Spec.Engine == "" {
		return experimentRecord{}, usagef("--resume %s: %s records no experiment spec (it was started by an older obsbench, which recorded its flags instead; run it again)", dir, experimentFile)
	}
	rec.Spec.Out = dir
	return rec, nil
}

// Resume continues the interrupted experiment in dir: its finished runs
// are kept, the rest run, and the report covers them all.
func Resume(ctx context.Context, dir string, out Output) error {
	rec, err := readExperiment(dir)
	if err != nil {
		return err
	}
	if rec.Spec.Method.Counted() {
		return usagef("--resume %s: %v", dir, errNotResumable)
	}
	// The recorded spec is complete: every setting counts as chosen, so
	// no default is filled in again.
	rec.Spec.Choose("warmup", "duration", "waits")
	c, err := resolve(rec.Spec, true, out)
	if err != nil {
		return err
	}
	if err := sameScripts(dir, rec.Scripts, c.scripts); err != nil {
		return err
	}
	if c.TargetResolution > 0 {
		// The pilot's plan depends on how long it took, which a resume
		// cannot know exactly.
		what := "the runs' length is planned again from the recorded A/A pilot"
		if c.Method.Twins() {
			what = "the phases a duet adds are planned again from the recorded A/A phases (and the time --max-time leaves from now)"
		}
		fmt.Fprintln(out.Stderr, "obsbench: resuming a --target-resolution experiment: "+what)
	}
	sum, err := c.Run(ctx, out)
	return c.Gate(sum, c.PrintStudy(out.Stdout, sum, err))
}

// sameScripts refuses to resume an experiment whose scripts changed: the
// finished runs measured the scripts as they were.
func sameScripts(dir string, then, now []result.Script) error {
	for i, s := range then {
		if i >= len(now) || now[i].SHA256 != s.SHA256 {
			return usagef("--resume %s: script %s changed since the experiment began (SHA-256 %.12s then, %.12s now): its finished runs measured the old one; restore it, or start a new experiment", dir, s.Path, s.SHA256, nowSum(now, i))
		}
	}
	return nil
}

func nowSum(now []result.Script, i int) string {
	if i < len(now) {
		return now[i].SHA256
	}
	return "none"
}

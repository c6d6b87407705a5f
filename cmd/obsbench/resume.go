package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/result"
)

// experimentFile, in a results directory, records how the experiment was
// started, so that --resume can plan exactly the same runs.
const experimentFile = "experiment.json"

// experimentRecord is experiment.json.
type experimentRecord struct {
	// Args are the run flags as given (a study's defaults included).
	Args []string `json:"args"`
	// Seed is the seed drawn when none was given.
	Seed  uint64 `json:"seed"`
	Study string `json:"study,omitempty"`
}

// writeExperiment records c in its --out directory.
func writeExperiment(c runConfig) error {
	b, err := json.MarshalIndent(experimentRecord{Args: redactArgs(c.args), Seed: c.seed, Study: c.study}, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(c.out, experimentFile)
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

// redactArgs removes the password from a --dsn argument. A resumed run
// then needs the password from PGPASSWORD or ~/.pgpass.
func redactArgs(args []string) []string {
	out := append([]string{}, args...)
	for i, a := range out {
		switch {
		case (a == "--dsn" || a == "-dsn") && i+1 < len(out):
			out[i+1] = engine.RedactDSN(out[i+1])
		case len(a) > 6 && (a[:6] == "--dsn=" || a[:5] == "-dsn="):
			k := 6
			if a[1] != '-' {
				k = 5
			}
			out[i] = a[:k] + engine.RedactDSN(a[k:])
		}
	}
	return out
}

// resumeConfig rebuilds the run of an interrupted experiment in dir.
func resumeConfig(dir string, stderr io.Writer) (runConfig, error) {
	if _, err := os.Stat(filepath.Join(dir, sweepFile)); err == nil {
		return runConfig{}, usagef("--resume %s: a sweep is resumed one session count at a time: --resume %s", dir, filepath.Join(dir, "sessions-N"))
	}
	b, err := os.ReadFile(filepath.Join(dir, experimentFile))
	if err != nil {
		return runConfig{}, usagef("--resume %s: %v (only a directory of an experiment started by this version can be resumed)", dir, err)
	}
	var rec experimentRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return runConfig{}, usagef("--resume %s: %s: %v", dir, experimentFile, err)
	}
	args := append(append([]string{}, rec.Args...), "--seed", strconv.FormatUint(rec.Seed, 10), "--out", dir)
	c, err := parseRunArgs(args, stderr, true)
	if err != nil {
		return c, err
	}
	if c.targetResolution > 0 {
		// The pilot's plan depends on how long it took, which a resume
		// cannot know exactly.
		fmt.Fprintln(stderr, "obsbench: resuming a --target-resolution experiment: the runs' length is planned again from the recorded A/A pilot")
	}
	c.study = rec.Study
	return c, nil
}

// finishedRuns reads the runs of an experiment being resumed, keeping
// those that finished (failed ones included: they were recorded) and
// dropping interrupted ones, which run again; results.jsonl is rewritten
// without them.
func finishedRuns(dir string, warn func(string, ...any)) (map[int]result.Run, error) {
	path := filepath.Join(dir, "results.jsonl")
	runs, err := result.ReadRuns(path)
	var trunc *result.TruncatedError
	if errors.Is(err, os.ErrNotExist) {
		// Stopped before its first run finished.
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			return nil, err
		}
		return map[int]result.Run{}, nil
	} else if errors.As(err, &trunc) {
		warn("%v", err)
	} else if err != nil {
		return nil, err
	}
	done := map[int]result.Run{}
	var keep []result.Run
	for _, r := range runs {
		if r.Error == "interrupted" {
			continue
		}
		if _, dup := done[r.Seq]; dup {
			return nil, fmt.Errorf("%s: run %d appears twice", path, r.Seq)
		}
		done[r.Seq] = r
		keep = append(keep, r)
	}
	if len(keep) != len(runs) || trunc != nil {
		if err := result.Rewrite(path, keep); err != nil {
			return nil, err
		}
	}
	warn("resuming %s: %d run(s) finished, the rest run now", dir, len(keep))
	return done, nil
}

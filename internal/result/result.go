// Package result holds obsbench's result types as plain data, and reads and
// writes them: one Run per line of results.jsonl, written durably before the
// next run starts, and the Summary of an experiment that other tools read,
// with the JSON Schema that says its form.
package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Version is the schema version of Run and Summary.
const Version = 1

// AAName is the condition that compares the baseline with itself (the A/A
// arm): how far apart two identical measurements fall.
const AAName = "baseline A/A"

// SplitAAName is a split's A/A condition in an experiment whose other
// observers are measured by other methods, beside their A/A.
const SplitAAName = AAName + SplitSuffix

// SplitSuffix ends the name of a split's condition beside another
// method's of the same observer (--method split,duet).
const SplitSuffix = " (split)"

// IsAA says whether a condition compares the baseline with itself.
func IsAA(condition string) bool { return condition == AAName || condition == SplitAAName }

// Run is one workload execution under one condition: one sample.
type Run struct {
	Version   int    `json:"version"`
	Seq       int    `json:"seq"`   // position in the experiment, from 1
	Round     int    `json:"round"` // from 1
	Condition string `json:"condition"`
	// Method is MethodRounds (one condition for the whole run),
	// MethodAlternation (the observer switched on and off during the run)
	// or MethodDuet (one phase of two twin servers driven at once, the
	// observer in force in one of them).
	Method Method `json:"method"`
	// Held describes what stayed in force in both phases of an
	// alternation run (what needs a restart to change), or in both
	// groups of a split's phase (what no session can change).
	Held string `json:"held,omitempty"`
	// Measures is whose cost the run measured (result.MeasuresWhole or
	// MeasuresSwitchable), as planned: a held part already in force on
	// the server changes nothing, and the run then measures the whole.
	Measures string `json:"measures,omitempty"`
	// Phases is the alternation schedule as it ran.
	Phases  []Phase   `json:"phases,omitempty"`
	Started time.Time `json:"started"`
	// ApplySeconds and RevertSeconds time the observer's change, restarts
	// included.
	ApplySeconds  float64      `json:"apply_seconds"`
	RevertSeconds float64      `json:"revert_seconds"`
	Driver        DriverResult `json:"driver"`
	// Usage is the CPU of the server, the driver and everything else
	// during the measured window (its JSON fields are inlined).
	Usage
	Events *Events `json:"events"` // nil: the observer records no events
	// Waits is the wait profile of the active client sessions while the
	// observer was in force (the whole window of a rounds run); WaitsOff
	// that of an alternation run's off phases. WaitInterval is the
	// sampling period in seconds. Nil when the wait sampler was off.
	Waits        *Waits  `json:"waits,omitempty"`
	WaitsOff     *Waits  `json:"waits_off,omitempty"`
	WaitInterval float64 `json:"wait_interval,omitempty"`
	// WaitSamplerCPUPct is the CPU the sampler's queries cost the server
	// (its backend process), as % of the machine; nil when not measured.
	WaitSamplerCPUPct *float64 `json:"wait_sampler_cpu_pct,omitempty"`
	// EngineWaits is the growth of the engine's own wait profile over the
	// window (pg_wait_sampling: every process, not only client sessions).
	EngineWaits map[string]int64 `json:"engine_waits,omitempty"`
	// Counters are the engine's activity counters as rates per second over
	// the window (both phases of an alternation run together).
	Counters map[string]float64 `json:"counters,omitempty"`
	// StreamPerSecond is the bytes a live stream's reader received in each
	// second of the window, for an observer that streams its events.
	StreamPerSecond []int64 `json:"stream_bytes_per_second,omitempty"`
	// ProbeErrors say which collectors failed; the run itself stands.
	ProbeErrors []string `json:"probe_errors,omitempty"`
	// Duet is a duet phase's other twin; the run's own figures are those
	// of the twin the observer was in force in (in the A/A arm, the twin
	// marked on). Nil for the other methods.
	Duet  *Duet  `json:"duet,omitempty"`
	Error string `json:"error,omitempty"`
}

// Duet is what a duet phase measured of the twin without the observer,
// and how each twin used its CPU share.
//
// A split's phase is recorded the same way, its two groups of sessions on
// one server in place of the twins (On names the group), with no CPU
// share.
type Duet struct {
	// On names the twin the observer was in force in: "a" or "b".
	On string `json:"on"`
	// Off is the other twin's load over the same window, OffUsage its CPU.
	Off      DriverResult `json:"off"`
	OffUsage Usage        `json:"off_usage"`
	// ShareCPUs is the CPU quota each twin had, in CPUs; 0: not isolated.
	ShareCPUs float64 `json:"share_cpus"`
	// OnCPUs and OffCPUs are the CPU each twin used over the window, in
	// CPUs: its server's where its load is apart (LoadApart), else its
	// server's and its load's.
	OnCPUs  float64 `json:"on_cpus"`
	OffCPUs float64 `json:"off_cpus"`
	// OnThrottledS and OffThrottledS are how long the quota held each
	// twin's processes back over the window, in seconds summed over CPUs
	// (the cgroup's throttled time).
	OnThrottledS  float64 `json:"on_throttled_s"`
	OffThrottledS float64 `json:"off_throttled_s"`
	// OnServerUS and OffServerUS are each twin's server CPU per statement
	// of the window, in µs, from its group's accounting (0: not read);
	// with LoadApart the server's alone.
	OnServerUS  float64 `json:"on_server_us_per_stmt,omitempty"`
	OffServerUS float64 `json:"off_server_us_per_stmt,omitempty"`
	// LoadApart says each twin's load ran in a group of its own, outside
	// the server's quota; OnLoadCPUs and OffLoadCPUs are the CPU it used,
	// LoadThrottledS how long the loads' groups held them back (both
	// twins': more than 0 means the load, not the server, was limited).
	LoadApart      bool    `json:"load_apart,omitempty"`
	OnLoadCPUs     float64 `json:"on_load_cpus,omitempty"`
	OffLoadCPUs    float64 `json:"off_load_cpus,omitempty"`
	LoadThrottledS float64 `json:"load_throttled_s,omitempty"`
}

// Phase is one stretch of an alternation run, in whole seconds of the
// measured window: [Start, End).
type Phase struct {
	Start int  `json:"start"`
	End   int  `json:"end"`
	On    bool `json:"on"`
	// SwitchMS is how long switching into this phase took (reload and
	// wait), in milliseconds; 0 for the first phase.
	SwitchMS float64 `json:"switch_ms"`
}

// Events compares what an observer recorded with what was executed.
type Events struct {
	Recorded int64 `json:"recorded"`
	Executed int64 `json:"executed"`
	// EngineLost is the growth of the engine's own counter of events it
	// could not record (MariaDB's Server_audit_writes_failed); nil when
	// the observer has none.
	EngineLost *int64 `json:"engine_lost,omitempty"`
	// EngineLostBuffers is the growth of the engine's count of whole
	// buffers of events it dropped (SQL Server's dropped_buffer_count:
	// under ALLOW_MULTIPLE_EVENT_LOSS events go a buffer at a time and
	// EngineLost may stay 0); nil when the observer has none.
	EngineLostBuffers *int64 `json:"engine_lost_buffers,omitempty"`
	// EngineBlocked is how long the observer's event firing was blocked
	// waiting for the engine to free a buffer rather than drop an event,
	// as the engine counts it: SQL Server's NO_EVENT_LOSS session's own
	// sys.dm_xe_sessions.blocked_event_fire_time, whose documentation
	// gives no unit, so none is claimed; nil when the observer cannot
	// block.
	EngineBlocked *int64 `json:"engine_blocked,omitempty"`
	// Volume says the events are not one per statement (lock events):
	// Recorded is how many the observer recorded and is not compared with
	// Executed.
	Volume bool `json:"volume,omitempty"`
	// SampleRate is the share of statements the observer records by design
	// (its events' sampled:); 0 when it records every one. Recorded is
	// then compared with Sampled's binomial interval.
	SampleRate float64 `json:"sample_rate,omitempty"`
	// Notes say what the count cannot tell: a ring that wrapped, files a
	// rollover deleted, a counter of every matching event on the server.
	Notes []string `json:"notes,omitempty"`
	// Error says why events could not be counted (then Recorded is 0).
	Error string `json:"error,omitempty"`
	// Files are the files the events were counted in, in the order the
	// server wrote them, where the observer writes rotated files.
	Files []FileCount `json:"files,omitempty"`
}

// FileCount is what one log file held of a run's events.
type FileCount struct {
	Name    string `json:"name"`
	Records int64  `json:"records"`
	// Bytes the file grew by during the run (all of its lines, not only
	// the counted ones).
	Bytes int64 `json:"bytes"`
}

// Records is how many records files hold together.
func Records(files []FileCount) int64 {
	var n int64
	for _, f := range files {
		n += f.Records
	}
	return n
}

// Writer appends runs to a results.jsonl file.
type Writer struct {
	f *os.File
}

// Create creates path for appending runs. An existing file is an error:
// the runs of two experiments must not mix in one file, and a finished
// experiment's results must not be overwritten.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_APPEND|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s already holds an experiment's results; choose another --out", path)
	}
	if err != nil {
		return nil, fmt.Errorf("open results: %w", err)
	}
	return &Writer{f: f}, nil
}

// Append writes r as one line and fsyncs it: a run that was reported done
// survives a crash of obsbench or of the machine.
func (w *Writer) Append(r Run) error {
	r.Version = Version
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := w.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return w.f.Sync()
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// TruncatedError says the last line of a results file was cut short (a
// crash while it was written); the runs before it were read.
type TruncatedError struct {
	Path string
	Line int
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("%s:%d: last line cut short (a crash while writing it?); ignored", e.Path, e.Line)
}

// ReadRuns reads a results.jsonl file. A last line cut short by a crash is
// ignored: the runs before it are returned with a *TruncatedError, which
// callers may treat as a warning. Any other bad line is an error.
func ReadRuns(path string) ([]Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := bytes.Split(b, []byte("\n"))
	var runs []Run
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Run
		if err := json.Unmarshal(line, &r); err != nil {
			if i == len(lines)-1 {
				// No newline after it: Append writes line and newline in one
				// write, so this is a write cut short.
				return runs, &TruncatedError{Path: path, Line: i + 1}
			}
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// Rewrite replaces path with runs, atomically: a new file is written and
// synced, then renamed over the old one. Resume uses it to drop runs that
// did not finish.
func Rewrite(path string, runs []Run) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := &Writer{f: f}
	for _, r := range runs {
		if err := w.Append(r); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Open opens an existing results file for appending (resuming).
func Open(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open results: %w", err)
	}
	return &Writer{f: f}, nil
}

// Finished reads the runs of an experiment being resumed from dir's
// results.jsonl, keeping those that finished (failed ones included: they
// were recorded) and dropping interrupted ones, which run again; the file
// is rewritten without them. warn hears of a truncated file and of what
// was kept.
func Finished(dir string, warn func(string, ...any)) (map[int]Run, error) {
	path := filepath.Join(dir, "results.jsonl")
	runs, err := ReadRuns(path)
	var trunc *TruncatedError
	if errors.Is(err, os.ErrNotExist) {
		// Stopped before its first run finished.
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			return nil, err
		}
		return map[int]Run{}, nil
	} else if errors.As(err, &trunc) {
		warn("%v", err)
	} else if err != nil {
		return nil, err
	}
	done := map[int]Run{}
	var keep []Run
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
		if err := Rewrite(path, keep); err != nil {
			return nil, err
		}
	}
	warn("resuming %s: %d run(s) finished, the rest run now", dir, len(keep))
	return done, nil
}

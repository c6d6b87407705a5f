// Package study defines obsbench's built-in studies: the published manual
// studies the project grew from (docs/studies/README.md), each as an
// experiment with fixed workload, observers and method, and the mapping from
// the study's original set-ups to the engine's analogues. The studies are
// data, one file per study in studies/ (an entry per engine), as the
// observers are in the observer catalog.
package study

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// Study is one built-in study for one engine: an entry of a file in
// studies/, whose name, title and question (unless the entry has its own)
// it takes.
type Study struct {
	Name     string `yaml:"-"`
	Engine   string `yaml:"engine"`
	Title    string `yaml:"-"`
	Question string `yaml:"question,omitempty"`
	Workload string `yaml:"workload"`
	// Workloads, when set, are run one experiment each, in order, with
	// the same conditions (study 4: autocommit, then batched).
	Workloads []string `yaml:"workloads,omitempty"`
	Clients   int      `yaml:"clients"`
	// Standby is the managed standby the study's primary has (none,
	// async, sync).
	Standby spec.Standby `yaml:"standby,omitempty"`
	// Audit, for study 5, is the audit observer whose trail is checked
	// for completeness and whose overhead is swept over session counts;
	// Sessions are the counts.
	Audit    string `yaml:"audit,omitempty"`
	Sessions []int  `yaml:"sessions,omitempty"`
	// Commit names, for study 4's table, the engine's counters and wait
	// of the commit path.
	Commit CommitKeys `yaml:"commit,omitempty"`
	// Method is the experiment's --method.
	Method result.Method `yaml:"method"`
	// Rounds and Duration, if set, are its --rounds and --duration.
	Rounds   int           `yaml:"rounds,omitempty"`
	Duration time.Duration `yaml:"duration,omitempty"`
	// Params are the workload's own parameters, by flag name (study 3's
	// --blocks).
	Params map[string]int `yaml:"params,omitempty"`
	// Waits is the wait sampler's interval, 0 for off (the study reads
	// waits).
	Waits time.Duration `yaml:"waits,omitempty"`
	// Rows are the set-ups in table order, the baseline first.
	Rows []Row `yaml:"rows,omitempty"`
	// Unmapped are set-ups of the original study with no analogue on this
	// engine, and why.
	Unmapped []string `yaml:"unmapped,omitempty"`
	// Matrix, for study 3, places each observer in the condensed table:
	// its target (row) and variant (column). Rows are made from it.
	Matrix []Cell `yaml:"matrix,omitempty"`
	// Variants, if set, are the matrix's columns; default: Variants.
	Variants []string `yaml:"variants,omitempty"`
	// Replay, for study 2, says the study replays a capture: made by
	// running Workload with capture on, unless the user gives --capture.
	Replay bool `yaml:"replay,omitempty"`
	// Count, if set, counts every condition's instructions after the
	// timed runs, one session at a time (study 3's counted column).
	Count *Count `yaml:"count,omitempty"`
}

// Count is what a study's counted part runs in each of its sessions:
// Statements counted after Warmup.
type Count struct {
	Statements int `yaml:"statements"`
	Warmup     int `yaml:"warmup"`
	// Shrink, if set, counts on the dataset with 1/Shrink of its rows.
	Shrink int `yaml:"shrink,omitempty"`
}

// aaTarget is study 3's A/A row: the baseline run again as if it were an
// observer. Its interval is what the study's other intervals are worth:
// it should contain 0, and its width is the least difference the study
// can tell.
const aaTarget = "nothing (A/A: the baseline again)"

// duetAA is a duet's own A/A arm: nothing in either twin. A study by duet
// places it in its A/A cell rather than running the baseline a second
// time as baseline-again, which would only repeat it.
const duetAA = result.AAName

// Cell is one observer of study 3's matrix.
type Cell struct {
	Target   string `yaml:"target"`
	Variant  string `yaml:"variant"`
	Observer string `yaml:"observer"`
}

// Variants are the columns of study 3's table, in order.
var Variants = []string{VariantAsIs, VariantLossy, VariantMoreFields, VariantFilteredOut}

// The variants of a target.
const (
	VariantAsIs        = "as is"
	VariantLossy       = "lossy"
	VariantMoreFields  = "more fields"
	VariantFilteredOut = "filtered out"
	// SQL Server's retention modes and causality tracking (study 3's own
	// variants): as is is ALLOW_SINGLE_EVENT_LOSS, lossy
	// ALLOW_MULTIPLE_EVENT_LOSS.
	VariantNoLoss    = "no event loss"
	VariantCausality = "causality"
)

// Columns are the variants of s's matrix, in table order.
func (s Study) Columns() []string {
	if len(s.Variants) > 0 {
		return s.Variants
	}
	return Variants
}

// matrixRows are the rows of a matrix study: the baseline, then each cell.
func matrixRows(cells []Cell) []Row {
	rows := []Row{{"baseline", "no observer"}}
	for _, c := range cells {
		rows = append(rows, Row{c.Observer, c.Target + ", " + c.Variant})
	}
	return rows
}

// CommitKeys are the names under which an engine's counters (per second,
// or levels) and waits hold what study 4 reads.
type CommitKeys struct {
	// Counters.
	Commits  string `yaml:"commits"`
	Flushes  string `yaml:"flushes"`
	LogBytes string `yaml:"log_bytes"`
	// A level, in ms, and what it is.
	Lag      string `yaml:"lag,omitempty"`
	LagLabel string `yaml:"lag_label,omitempty"`
	LagNote  string `yaml:"lag_note,omitempty"`
	// The wait for the replica.
	Wait string `yaml:"wait"`
}

// Row is one set-up: an observer and the original set-up it stands for.
type Row struct {
	Observer string `yaml:"observer"`
	Original string `yaml:"original"`
}

// Observers lists the rows' observers, without the baseline.
func (s Study) Observers() []string {
	var out []string
	for _, r := range s.Rows {
		if r.Observer != "baseline" && r.Observer != duetAA {
			out = append(out, r.Observer)
		}
	}
	return out
}

// Lookup finds engine's study by name (in the order of the observer
// catalog's Lookup).
func Lookup(engine, name string) (Study, error) {
	if s, ok := studies[engine][name]; ok {
		return s, nil
	}
	return Study{}, fmt.Errorf("no study %q for %s; built-in studies: %s", name, engine, strings.Join(Names(engine), ", "))
}

// Names lists the studies for engine.
func Names(engine string) []string {
	return slices.Sorted(maps.Keys(studies[engine]))
}

// All lists every built-in study, by engine, then name.
func All() []Study {
	var out []Study
	for _, e := range slices.Sorted(maps.Keys(studies)) {
		for _, name := range Names(e) {
			out = append(out, studies[e][name])
		}
	}
	return out
}

package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// Formats are the output formats of a report on standard output.
var Formats = []spec.Format{spec.FormatText, spec.FormatMarkdown, spec.FormatJSON, spec.FormatCSV, spec.FormatBenchstat, spec.FormatSeries}

// Write writes s (and, for benchstat, its runs) in format.
func Write(w io.Writer, format spec.Format, s result.Summary, runs []result.Run) error {
	switch format {
	case spec.FormatText:
		return Text(w, s)
	case spec.FormatMarkdown:
		return Markdown(w, s)
	case spec.FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	case spec.FormatCSV:
		return CSV(w, s)
	case spec.FormatBenchstat:
		return Benchstat(w, s, runs)
	case spec.FormatSeries:
		return Series(w, s, runs)
	}
	return fmt.Errorf("unknown format %q", format)
}

// CSV writes one row per condition, with a header: what a spreadsheet
// needs to chart or compare the overheads, and to tell experiments apart
// when rows of several are put together (engine, workload, seed). Empty
// cells are values not measured; method is its name (the text and JSON
// formats have the note that says how). Columns are only ever added at
// the end.
func CSV(w io.Writer, s result.Summary) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	for _, c := range s.Conditions {
		cw.Write(csvRow(s, c))
	}
	cw.Flush()
	return cw.Error()
}

// csvHeader names CSV's columns.
var csvHeader = []string{"condition", "method", "stmts_per_s", "overhead_pct", "ci_low", "ci_high", "significant", "verdict",
	"p50_ms", "p99_ms", "events_recorded", "events_executed", "engine_lost", "server_cpu_pct", "driver_cpu_pct",
	"engine", "server_version", "workload", "clients", "seed", "measures", "window",
	"ref_stmts_per_s", "ref_p50_ms", "ref_p99_ms", "server_us_per_stmt", "ref_server_us_per_stmt",
	"cpu_per_stmt_change_pct", "cpu_per_stmt_change_ci_low", "cpu_per_stmt_change_ci_high",
	"instr_per_stmt_change_pct", "instr_per_stmt_change_ci_low", "instr_per_stmt_change_ci_high",
	"other_instr_change_pct", "other_instr_change_ci_low", "other_instr_change_ci_high",
	"server_us_added", "server_us_added_ci_low", "server_us_added_ci_high",
	"server_share_pct", "server_share_ci_low", "server_share_ci_high",
	"overhead_basis", "throughput_overhead_pct", "throughput_overhead_ci_low", "throughput_overhead_ci_high"}

// csvRow is condition c's row of CSV.
func csvRow(s result.Summary, c result.ConditionSummary) []string {
	f, fp := csvNumber, csvOptional
	row := []string{c.Name, methodName(c.Method), f(c.Throughput.Median), "", "", "", "", "", f(c.LatencyMS.P50), f(c.LatencyMS.P99), "", "", "", "", f(c.CPU.DriverPct)}
	if o := c.Overhead; o != nil {
		row[7] = o.Verdict
		if o.Measured() {
			row[3], row[4], row[5], row[6] = f(o.Pct), f(o.CILow), f(o.CIHigh), strconv.FormatBool(o.Significant)
		}
	}
	if e := c.Events; e != nil {
		row[10], row[11] = strconv.FormatInt(e.Recorded, 10), strconv.FormatInt(e.Executed, 10)
		if e.EngineLost != nil {
			row[12] = strconv.FormatInt(*e.EngineLost, 10)
		}
	}
	row[13] = fp(c.CPU.ServerPct)
	row = append(row, s.Engine, s.Server, s.Workload, strconv.Itoa(s.Clients), strconv.FormatUint(s.Seed, 10), c.Measures, c.Window)
	ref := []string{"", "", "", fp(c.CPU.ServerUSPerStmt), ""}
	if r := c.Reference; r != nil {
		ref[0], ref[4] = f(r.StmtsPerS), fp(r.ServerUSPerStmt)
		if r.LatencyMS.P50 > 0 {
			ref[1], ref[2] = f(r.LatencyMS.P50), f(r.LatencyMS.P99)
		}
	}
	row = append(row, ref...)
	if d := c.CPUChange; d != nil {
		row = append(row, f(d.Pct), f(d.CILow), f(d.CIHigh))
	} else {
		row = append(row, "", "", "")
	}
	// Counted changes (--count): empty where the row was not counted.
	counted := []string{"", "", "", "", "", ""}
	if k := countedFor(s, c); k != nil {
		for i, d := range []*result.CountChange{k.BackendChange, k.HelperChange} {
			if d != nil && d.HasCI {
				counted[3*i], counted[3*i+1], counted[3*i+2] = f(d.Pct), f(d.Low), f(d.High)
			} else if d != nil {
				counted[3*i] = f(d.Pct)
			}
		}
	}
	row = append(row, counted...)
	if k := c.ServerCost; k != nil {
		row = append(row, f(k.Added.US), f(k.Added.CILow), f(k.Added.CIHigh), f(k.Share.Pct), f(k.Share.CILow), f(k.Share.CIHigh))
	} else {
		row = append(row, "", "", "", "", "", "")
	}
	// A duet's overhead basis, and its throughput figure where the
	// overhead is read from server CPU per statement.
	basis, tput := "", []string{"", "", ""}
	if o := c.Overhead; o != nil {
		basis = o.Basis
	}
	if o := c.ThroughputOverhead; o.Measured() {
		tput = []string{f(o.Pct), f(o.CILow), f(o.CIHigh)}
	}
	row = append(append(row, basis), tput...)
	return row
}

// csvNumber is v with three decimals at most: a thousandth of a percent,
// of a statement a second or of a millisecond is below anything obsbench
// can resolve.
func csvNumber(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) }

// csvOptional is csvNumber of *v, empty for nil (not measured).
func csvOptional(v *float64) string {
	if v == nil {
		return ""
	}
	return csvNumber(*v)
}

// methodName is the method of a condition's method note ("duet: 8 pairs
// of phases, ..." is duet): the note is prose, a CSV column is data.
func methodName(note string) string {
	name, _, _ := strings.Cut(note, ":")
	return name
}

var nameUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Benchstat writes the runs in the Go benchmark format, one result line
// per sample, so that two experiments can be compared with the standard
// benchstat tool (golang.org/x/perf/cmd/benchstat): `benchstat old.txt
// new.txt`. The benchmark is named after the condition
// (BenchmarkObsbench/condition=pg-stat-statements), and the configuration
// lines name the engine, server version, workload and clients. A rounds
// run is one sample; an alternation run gives one sample per phase, its
// on phases under /phase=on and its off phases under /phase=off, each
// without its first second, as the analysis does: enough samples for
// benchstat to test. At a fixed rate, where throughput is the rate's, a
// whole run's line also has its server CPU per statement (srv-us/stmt)
// and its latency from the schedule (sched-p50-ms, sched-p99-ms): the
// cost and what users arriving on the schedule saw.
func Benchstat(w io.Writer, s result.Summary, runs []result.Run) error {
	fmt.Fprintf(w, "engine: %s\nserver: %s\nworkload: %s\nclients: %d\nseed: %d\n", s.Engine, s.Server, s.Workload, s.Clients, s.Seed)
	line := func(cond, phase string, stmts int64, seconds float64, more string) {
		if stmts == 0 || seconds <= 0 {
			return
		}
		perS := float64(stmts) / seconds
		fmt.Fprintf(w, "BenchmarkObsbench/condition=%s%s %d %.1f ns/stmt %.1f stmts/s%s\n",
			nameUnsafe.ReplaceAllString(cond, "_"), phase, stmts, 1e9/perS, perS, more)
	}
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		if len(r.Phases) == 0 {
			line(r.Condition, "", r.Driver.Measured, r.Driver.Seconds, rateUnits(r))
			continue
		}
		for _, p := range r.Phases {
			if p.End-p.Start < 2 {
				continue
			}
			phase := "/phase=off"
			if p.On {
				phase = "/phase=on"
			}
			line(r.Condition, phase, phaseStatements(r.Driver.PerSecond, p.Start+1, p.End), float64(p.End-p.Start-1), "")
		}
	}
	return nil
}

// rateUnits are a run's figures at a rate for its benchstat line: server
// CPU per statement where the server's CPU was read, and the latency
// from the schedule unless it could not keep the rate (the queue's).
func rateUnits(r result.Run) string {
	d := r.Driver
	if d.Rate == nil {
		return ""
	}
	var out string
	if u := r.Usage.Server; u != nil && d.Measured > 0 {
		out += fmt.Sprintf(" %.2f srv-us/stmt", 1e6*u.Seconds/float64(d.Measured))
	}
	if !d.Rate.Saturated() && d.Rate.Completed > 0 {
		out += fmt.Sprintf(" %.3f sched-p50-ms %.3f sched-p99-ms", d.Rate.Latency.P50, d.Rate.Latency.P99)
	}
	return out
}

// phaseStatements counts the statements of every session in seconds
// [from, to) of the window.
func phaseStatements(perSecond [][]int64, from, to int) int64 {
	var n int64
	for _, sess := range perSecond {
		for i := from; i < to && i < len(sess); i++ {
			n += sess[i]
		}
	}
	return n
}

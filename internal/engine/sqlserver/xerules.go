package sqlserver

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/internal/observer"
)

// Rules of CREATE EVENT SESSION and of its targets, as Microsoft documents
// them. They are checked when an observer is parsed (CheckObserver), so a
// catalog entry that breaks one fails at load and in `make test`, not on
// a user's server, which obsbench cannot reach from here.
//
// Sources:
//   - CREATE EVENT SESSION: https://learn.microsoft.com/sql/t-sql/statements/create-event-session-transact-sql
//   - targets: https://learn.microsoft.com/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server
//     (event_counter, histogram and pair_matching options and rules);
//     the ring buffer and event file option tables with their ranges:
//     https://learn.microsoft.com/previous-versions/sql/sql-server-2012/ff878182(v=sql.110)
//     https://learn.microsoft.com/previous-versions/sql/sql-server-2016/ff878115(v=sql.130)

// optionRule is what one target option accepts.
type optionRule struct {
	kind     string // "int" (whole number min..max), "bit" (0 or 1), "string"
	min, max int64
	required bool
}

var (
	int32Option = optionRule{kind: "int", min: 0, max: math.MaxInt32}
	bitOption   = optionRule{kind: "bit"}
	textOption  = optionRule{kind: "string"}
)

// targetOptions are the options each target takes; any other is an error.
var targetOptions = map[string]map[string]optionRule{
	// "max_memory: any 32 bit integer ... in kilobytes"; "max_event_limit
	// (max_events_limit in T-SQL): any 32 bit integer, default 1000";
	// "occurrence_number: 0 (the default) ... any 32 bit integer".
	"ring_buffer": {"max_memory": int32Option, "max_events_limit": int32Option, "occurrence_number": int32Option},
	// filename: "any string up to 260 characters. This value is
	// required", and ".xel must be the extension of the file";
	// max_file_size: "any 64 bit integer", in MB, and "must be larger than
	// the current size of the session buffers"; max_rollover_files and
	// increment (MB): "any 32 bit integer".
	"event_file": {"filename": {kind: "string", required: true}, "max_file_size": {kind: "int", min: 1, max: math.MaxInt64},
		"max_rollover_files": int32Option, "increment": int32Option, "metadatafile": textOption},
	// "The event_counter has no parameters."
	"event_counter": {},
	// "source_type=0 means collect data for event fields, 1 for actions";
	// "The 'slots' parameter default is 256 ... rounded up to the next
	// power of 2"; source names what is bucketed.
	"histogram": {"filtering_event_name": textOption, "source": {kind: "string", required: true}, "source_type": bitOption,
		"slots": {kind: "int", min: 1, max: math.MaxInt32}},
	// "The sequence of comma-delimited fields assigned to
	// begin_matching_columns= and end_matching_columns= must be the same."
	"pair_matching": {"begin_event": {kind: "string", required: true}, "begin_matching_columns": textOption, "begin_matching_actions": textOption,
		"end_event": {kind: "string", required: true}, "end_matching_columns": textOption, "end_matching_actions": textOption,
		"respond_to_memory_pressure": bitOption, "max_orphans": int32Option},
}

// maxMemoryKB: MAX_MEMORY "cannot exceed 2 GB (less than 2048 MB)".
const maxMemoryKB = 2048*1024 - 1

// maxPredicate: "Predicate expressions are limited to 3000 characters".
const maxPredicate = 3000

// ansiLiteral finds a string literal without the N prefix in a
// predicate. "No implicit string type conversion is performed for the
// predicate compare functions. Passing the wrong type results in an
// error": the sources compared here (database_name, username,
// client_app_name) are unicode strings.
func ansiLiteral(pred string) (string, bool) {
	for i := 0; i < len(pred); i++ {
		if pred[i] != '\'' {
			continue
		}
		start := i
		for i++; i < len(pred); i++ { // to the closing quote; '' is a quote
			if pred[i] == '\'' {
				if i+1 < len(pred) && pred[i+1] == '\'' {
					i++
					continue
				}
				break
			}
		}
		if start == 0 || pred[start-1] != 'N' {
			return pred[start:min(i+1, len(pred))], true
		}
	}
	return "", false
}

// CheckXE checks an Extended Events session against the documented rules.
// It returns the observer field at fault and what is wrong.
func CheckXE(x *XESession) error {
	if x.MaxMemoryKB > maxMemoryKB {
		return fmt.Errorf("max_memory_kb %d: MAX_MEMORY must be less than 2048 MB (%d KB)", x.MaxMemoryKB, maxMemoryKB+1)
	}
	if x.MaxDispatchLatency == "0s" {
		return fmt.Errorf("max_dispatch_latency 0s means INFINITE to SQL Server (the minimum latency is 1 second): write INFINITE")
	}
	var events []string // package.event
	for _, e := range x.Events {
		events = append(events, e.Name)
		if len(e.Where) > maxPredicate {
			return fmt.Errorf("event %s: predicate of %d characters; SQL Server allows %d", e.Name, len(e.Where), maxPredicate)
		}
		if lit, ok := ansiLiteral(e.Where); ok {
			return fmt.Errorf("event %s: predicate string %s is not N'...': predicate comparisons convert no string type", e.Name, lit)
		}
	}
	memory := x.MaxMemoryKB
	if memory == 0 {
		memory = defaultMemoryKB
	}
	for _, t := range x.Targets {
		if err := checkTarget(t, events, memory); err != nil {
			return fmt.Errorf("target %s: %w", t.Kind, err)
		}
	}
	return nil
}

// defaultMemoryKB is MAX_MEMORY's default: "The default is 4 MB."
const defaultMemoryKB = 4096

func checkTarget(t XETarget, events []string, memoryKB int) error {
	rules, ok := targetOptions[t.Kind]
	if !ok {
		return fmt.Errorf("not a target obsbench knows the options of")
	}
	for name, v := range t.Set {
		r, ok := rules[name]
		if !ok {
			return fmt.Errorf("option %q is not one of its options (%s)", name, strings.Join(optionNames(rules), ", "))
		}
		if err := r.check(v); err != nil {
			return fmt.Errorf("option %s: %w", name, err)
		}
	}
	for name, r := range rules {
		if _, ok := t.Set[name]; r.required && !ok {
			return fmt.Errorf("option %s is required", name)
		}
	}
	switch t.Kind {
	case "event_file":
		f := t.Set["filename"]
		if !strings.HasSuffix(f, ".xel") {
			return fmt.Errorf("filename %q: .xel must be the extension of the file", f)
		}
		if len(f) > 260 {
			return fmt.Errorf("filename of %d characters; the most is 260", len(f))
		}
		if v, ok := t.Set["max_file_size"]; ok {
			if mb, _ := strconv.ParseInt(v, 10, 64); mb*1024 <= int64(memoryKB) {
				return fmt.Errorf("max_file_size %s MB must be larger than the session's buffers (MAX_MEMORY %d KB)", v, memoryKB)
			}
		}
	case "histogram":
		if f, ok := t.Set["filtering_event_name"]; ok && !slices.Contains(events, f) {
			return fmt.Errorf("filtering_event_name %q is not an event of the session (%s)", f, strings.Join(events, ", "))
		}
	case "pair_matching":
		for _, opt := range []string{"begin_event", "end_event"} {
			if f := t.Set[opt]; !slices.Contains(events, f) {
				return fmt.Errorf("%s %q is not an event of the session (%s)", opt, f, strings.Join(events, ", "))
			}
		}
		if b, e := fields(t.Set["begin_matching_columns"]), fields(t.Set["end_matching_columns"]); len(b) != len(e) {
			return fmt.Errorf("begin_matching_columns has %d fields and end_matching_columns %d: they must be the same sequence", len(b), len(e))
		}
	}
	return nil
}

func (r optionRule) check(v string) error {
	switch r.kind {
	case "bit":
		if v != "0" && v != "1" {
			return fmt.Errorf("%q is 0 or 1", v)
		}
	case "int":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < r.min || n > r.max {
			return fmt.Errorf("%q is a whole number from %d to %d", v, r.min, r.max)
		}
	}
	return nil
}

func optionNames(rules map[string]optionRule) []string {
	names := make([]string, 0, len(rules))
	for n := range rules {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// fields splits a comma-delimited list of field names.
func fields(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// checkXECount checks that an xe: observer's events: can be counted the
// way it says: a histogram holds only its filtering event's count, a
// ring_buffer's volume is every event the session sent it.
func checkXECount(o observer.Observer) error {
	ev := o.Events
	if ev == nil || ev.Source != SourceXE {
		return nil
	}
	names := strings.Split(ev.Match, ",")
	var session []string
	x := sessionOf(o)
	for _, e := range x.Events {
		_, name, _ := strings.Cut(e.Name, ".")
		session = append(session, name)
	}
	for _, n := range names {
		if !slices.Contains(session, n) {
			return fmt.Errorf("match names %s, which is not an event of the session (%s)", n, strings.Join(session, ", "))
		}
	}
	target := countableTarget(x)
	if (target == "ring_buffer" || target == "histogram") && x.MaxDispatchLatency == "INFINITE" {
		// FlushWait: an asynchronous target receives events only as the
		// buffers are dispatched, which INFINITE leaves to full buffers;
		// stopping the session to flush them empties the target.
		return fmt.Errorf("a %s is asynchronous: with max_dispatch_latency INFINITE its last events stay in the session's buffers and cannot be counted; give a latency in seconds or count an event_file or event_counter", target)
	}
	switch target {
	case "histogram":
		f := x.Targets[slices.IndexFunc(x.Targets, func(t XETarget) bool { return t.Kind == "histogram" })].Set["filtering_event_name"]
		_, fname, _ := strings.Cut(f, ".")
		if !ev.Volume || len(names) != 1 || names[0] != fname {
			return fmt.Errorf("a histogram keeps counts, not events: count it with volume: true and match: %s, its filtering event", fname)
		}
	case "ring_buffer":
		if ev.Volume && len(names) != len(session) {
			return fmt.Errorf("a ring_buffer's volume is every event the session sent it: match must name all of %s", strings.Join(session, ", "))
		}
	case "event_counter":
		if !ev.Volume {
			return checkTagPredicate(o, names)
		}
	case "event_file":
	default:
		return fmt.Errorf("its session has no target that keeps events or counts (%s)", strings.Join(countable, ", "))
	}
	return nil
}

// TagPrefix starts every workload's tag (workload.Meta.Tag).
const TagPrefix = "obsbench-"

// tagPredicate is the predicate that keeps only the statements whose text
// carries a tag.
const tagPredicate = "sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, N'%" + TagPrefix + "%')"

// checkTagPredicate refuses an event_counter count of statements whose
// events are not filtered on the tag: the target keeps counts, no text to
// match with the workload's tag afterwards, and a workload's untagged
// statements (inserts-batched's BEGIN and COMMIT TRANSACTION), which the
// driver does not count, would be counted as extra events.
func checkTagPredicate(o observer.Observer, names []string) error {
	for _, e := range sessionOf(o).Events {
		_, name, _ := strings.Cut(e.Name, ".")
		if slices.Contains(names, name) && !strings.Contains(e.Where, tagPredicate) {
			return fmt.Errorf("an event_counter keeps no statement text to match with the workload's tag, so event %s would count its untagged statements too (BEGIN and COMMIT TRANSACTION): add %s to its predicate", e.Name, tagPredicate)
		}
	}
	return nil
}

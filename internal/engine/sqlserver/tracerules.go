package sqlserver

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/internal/observer"
)

// Rules of SQL Trace as Microsoft documents them, checked when an observer
// is parsed (CheckObserver). A filter on a column an event does not carry
// does not filter that event out: the lock trace's DatabaseName filter
// recorded everything. These tables make that an error at load.
//
// Sources, under https://learn.microsoft.com/sql/relational-databases/:
//   - each event class's data columns, types and whether they can be
//     filtered: event-classes/<event>-event-class (traceEvents below);
//   - which operators each filterable column takes: sql-trace/filter-a-trace;
//   - sp_trace_setfilter: "The data type of value must match the data type
//     of the column to be filtered"; "Only 0 (= Equal) and 1 (<> Not
//     Equal) operators are valid with NULL"; "All filters for a particular
//     column must be enabled together in one execution" (consecutively);
//     return code 5, "The specified Column is not allowed for filtering".

// traceColumn is one data column as an event class page lists it.
type traceColumn struct {
	name       string
	typ        string // int, bigint, nvarchar, ntext, datetime, image, uniqueidentifier
	filterable bool
}

// traceEvent is one event class and the data columns it carries.
type traceEvent struct {
	name    string
	page    string // event-classes/<page>-event-class
	columns map[int]traceColumn
}

// filterOperators are the relational operators each filterable column
// takes (sql-trace/filter-a-trace); a column not listed there cannot be
// filtered from T-SQL.
var filterOperators = map[string][]string{}

func init() {
	numeric := []string{"=", "<>", ">=", "<="}
	text := []string{"LIKE", "NOT LIKE"}
	for _, c := range []string{"BigintData1", "BigintData2", "ClientProcessID", "ColumnPermissions", "CPU", "DatabaseID",
		"Duration", "Error", "EventSubClass", "Handle", "IndexID", "IntegerData", "IntegerData2", "IsSystem", "LineNumber",
		"Mode", "NestLevel", "ObjectID", "ObjectID2", "ObjectType", "Offset", "OwnerID", "Permissions", "Reads", "RequestID",
		"RowCounts", "Severity", "SourceDatabaseID", "SPID", "State", "Success", "TransactionID", "Type", "Writes", "XactSequence"} {
		filterOperators[c] = numeric
	}
	for _, c := range []string{"ApplicationName", "DatabaseName", "DBUserName", "FileName", "HostName", "LinkedServerName",
		"LoginName", "MethodName", "NTDomainName", "NTUserName", "ObjectName", "OwnerName", "ParentName", "ProviderName",
		"RoleName", "SessionLoginName", "TargetLoginName", "TargetUserName", "TextData"} {
		filterOperators[c] = text
	}
	filterOperators["EndTime"] = []string{">=", "<="}
	filterOperators["StartTime"] = []string{">=", "<="}
}

// CheckTrace checks a trace against the documented rules.
func CheckTrace(t *Trace) error {
	if err := checkMaxFiles(t); err != nil {
		return err
	}
	for _, id := range t.Events {
		ev, ok := traceEvents[id]
		if !ok {
			return fmt.Errorf("event %d is not among the event classes obsbench has the documented columns of (%s): add it from its event-classes page", id, knownEvents())
		}
		for _, col := range traceColumnsOf(t, id) {
			if _, ok := ev.columns[col]; !ok {
				return fmt.Errorf("column %d%s is not a data column of event %d (%s): %s; list it under event_columns of the events that carry it",
					col, columnName(col), id, ev.name, ev.page)
			}
		}
	}
	var done []int // columns whose filters are set
	for i, f := range t.Filters {
		if i > 0 && t.Filters[i-1].Column != f.Column && slices.Contains(done, f.Column) {
			return fmt.Errorf("filters on column %d are not together: sp_trace_setfilter needs all filters of one column in sequence", f.Column)
		}
		done = append(done, f.Column)
		if err := checkFilter(t, f); err != nil {
			return fmt.Errorf("filter on column %d%s: %w", f.Column, columnName(f.Column), err)
		}
	}
	return nil
}

// checkMaxFiles refuses a max_files the server would refuse at run time:
// sp_trace_create's @filecount, "max_rollover_files is int, greater than
// one", and "valid only if the TRACE_FILE_ROLLOVER option is specified".
// https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-trace-create-transact-sql
func checkMaxFiles(t *Trace) error {
	switch {
	case t.MaxFiles == 0:
		return nil
	case t.MaxFiles < 2:
		return fmt.Errorf("max_files %d: sp_trace_create's max_rollover_files is an int greater than one (leave it out to keep every file)", t.MaxFiles)
	case !t.Rollover:
		return errors.New("max_files without rollover: sp_trace_create's max_rollover_files is valid only with TRACE_FILE_ROLLOVER")
	}
	return nil
}

// traceColumnsOf are the columns set for event id.
func traceColumnsOf(t *Trace, id int) []int {
	return append(append([]int{}, t.Columns...), t.EventColumns[id]...)
}

func checkFilter(t *Trace, f TraceFilter) error {
	var col traceColumn
	for _, id := range t.Events {
		ev := traceEvents[id]
		c, ok := ev.columns[f.Column]
		if !ok {
			// The event is recorded unfiltered: the filter does not apply.
			return fmt.Errorf("event %d (%s) does not carry it, so the filter would not filter that event out (%s)", id, ev.name, ev.page)
		}
		if !c.filterable {
			return fmt.Errorf("event %d (%s) documents it as not filterable", id, ev.name)
		}
		col = c
	}
	ops, ok := filterOperators[col.name]
	if !ok {
		return errors.New("it cannot be filtered with sp_trace_setfilter (sql-trace/filter-a-trace)")
	}
	if !slices.Contains(ops, f.Op) {
		return fmt.Errorf("%s takes %s, not %s (sql-trace/filter-a-trace)", col.name, strings.Join(ops, ", "), f.Op)
	}
	_, err := filterValue(col, f.Value)
	return err
}

// filterValue is the T-SQL literal of a filter's value in its column's
// type, with the placeholders that stand for numbers read as numbers.
// sp_trace_setfilter's @value is sql_variant: an integer literal is an
// int, N'...' an nvarchar; a bigint needs a cast variable.
func filterValue(col traceColumn, v string) (string, error) {
	switch col.typ {
	case "int", "bigint":
		probe := strings.NewReplacer(DatabaseIDPlaceholder, "5", NoDatabaseIDPlaceholder, "6").Replace(v)
		if _, err := strconv.ParseInt(probe, 10, 64); err != nil {
			return "", fmt.Errorf("value %q is not a whole number, and %s is %s (the value must be of the column's type)", v, col.name, col.typ)
		}
		return v, nil
	case "nvarchar", "ntext":
		if strings.Contains(v, DatabaseIDPlaceholder) || strings.Contains(v, NoDatabaseIDPlaceholder) {
			return "", fmt.Errorf("value %q is a number, and %s is %s", v, col.name, col.typ)
		}
		if len(v) > 4000 {
			return "", errors.New("an nvarchar value can have at most 8000 bytes")
		}
		return quoteString(v), nil
	}
	return "", fmt.Errorf("%s is %s: obsbench filters only numbers and text", col.name, col.typ)
}

func knownEvents() string {
	ids := make([]int, 0, len(traceEvents))
	for id := range traceEvents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ", ")
}

// columnName is " (Name)" for a column some known event documents.
func columnName(col int) string {
	for _, ev := range traceEvents {
		if c, ok := ev.columns[col]; ok {
			return " (" + c.name + ")"
		}
	}
	return ""
}

// traceColumnType is the documented type of a column (the same in every
// event that carries it).
func traceColumnType(col int) (traceColumn, bool) {
	for _, ev := range traceEvents {
		if c, ok := ev.columns[col]; ok {
			return c, true
		}
	}
	return traceColumn{}, false
}

// CheckObserver runs the documented rules over a sqlserver observer
// (engine.Info.Observers), after its sections' own checks: how its
// events are counted, its session, its trace.
func CheckObserver(o observer.Observer) (string, error) {
	if err := checkSource(o); err != nil {
		return "events", err
	}
	if x := sessionOf(o); x != nil {
		if err := CheckXE(x); err != nil {
			return SourceXE, err
		}
		if err := checkXECount(o); err != nil {
			return "events", err
		}
	}
	if t := traceOf(o); t != nil {
		if err := CheckTrace(t); err != nil {
			return SourceTrace, err
		}
		if ev := o.Events; ev != nil && ev.Source == SourceTrace {
			for _, s := range strings.Split(ev.Match, ",") {
				if id, _ := strconv.Atoi(s); !slices.Contains(t.Events, id) {
					return "events", fmt.Errorf("match names event %s, which the trace does not record", s)
				}
			}
		}
	}
	return "", nil
}

package sqlserver

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/observer"
)

// NamePrefix starts the name of every session and trace file obsbench
// creates; nothing without it is ever stopped or dropped.
const NamePrefix = "obsbench_"

// StampPlaceholder stands, in a file name, for a suffix unique to one
// apply: a trace refuses to write to a file that exists, and the files
// stay after the revert.
const StampPlaceholder = "{{stamp}}"

// Env is what rendering an observer needs to know of the server.
type Env struct {
	Database string // the dataset's database
	// DatabaseID is its DB_ID(): trace filters on DatabaseID (column 3)
	// take it, as an int.
	DatabaseID int
	// NoDatabaseID is an id no database on the server has, for a filter
	// that never matches (the study's database_id = 77): one above the
	// highest in sys.databases.
	NoDatabaseID int
	// LogDir is the server's log directory with its trailing separator
	// ("/var/opt/mssql/log/", `C:\...\MSSQL\Log\`).
	LogDir string
	Stamp  string // unique per apply, e.g. 20261122T161400
}

// SessionName is the XE session obsbench creates for o.
func SessionName(o observer.Observer) string {
	return NamePrefix + strings.ReplaceAll(o.Name, "-", "_")
}

// fill replaces the catalog's placeholders with env's values.
func (env Env) fill(s string) string {
	return strings.NewReplacer(XEDirPlaceholder, env.LogDir, DatabasePlaceholder, env.Database,
		DatabaseIDPlaceholder, strconv.Itoa(env.DatabaseID), NoDatabaseIDPlaceholder, strconv.Itoa(env.NoDatabaseID),
		DriverAppPlaceholder, driverApp, StampPlaceholder, env.Stamp).Replace(s)
}

// CreateSessionSQL is the CREATE EVENT SESSION statement for o's xe:.
// Syntax: https://learn.microsoft.com/sql/t-sql/statements/create-event-session-transact-sql
// Numbers are written in parentheses and strings as N'...', as SQL Server
// Management Studio scripts them. STARTUP_STATE = OFF: a session obsbench
// leaves behind by a crash does not come back with the server.
func CreateSessionSQL(o observer.Observer, env Env) string {
	x := sessionOf(o)
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE EVENT SESSION %s ON SERVER", quoteName(SessionName(o)))
	for i, e := range x.Events {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\nADD EVENT %s", e.Name)
		var parts []string
		if len(e.Set) > 0 {
			parts = append(parts, "SET "+options(e.Set, env))
		}
		if len(e.Actions) > 0 {
			parts = append(parts, "ACTION("+strings.Join(e.Actions, ", ")+")")
		}
		if e.Where != "" {
			parts = append(parts, "WHERE ("+env.fill(e.Where)+")")
		}
		// An event with nothing to set, act or filter takes no parentheses.
		if len(parts) > 0 {
			b.WriteString("(" + strings.Join(parts, "\n    ") + ")")
		}
	}
	for i, t := range x.Targets {
		// Commas separate events and separate targets, never the two
		// lists: "ADD EVENT a(...), ADD EVENT b ADD TARGET t1, ADD TARGET t2".
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\nADD TARGET package0.%s", t.Kind)
		if len(t.Set) > 0 {
			b.WriteString("(SET " + options(t.Set, env) + ")")
		}
	}
	out := b.String()
	with := []string{}
	if x.MaxMemoryKB > 0 {
		with = append(with, fmt.Sprintf("MAX_MEMORY = %d KB", x.MaxMemoryKB))
	}
	retention := x.Retention
	if retention == "" {
		retention = RetainSingleLoss
	}
	with = append(with, "EVENT_RETENTION_MODE = "+retention)
	switch lat := x.MaxDispatchLatency; {
	case lat == "INFINITE":
		with = append(with, "MAX_DISPATCH_LATENCY = INFINITE")
	case lat != "":
		with = append(with, "MAX_DISPATCH_LATENCY = "+strings.TrimSuffix(lat, "s")+" SECONDS")
	}
	causality := "OFF"
	if x.TrackCausality {
		causality = "ON"
	}
	with = append(with, "TRACK_CAUSALITY = "+causality, "STARTUP_STATE = OFF")
	return out + "\nWITH (" + strings.Join(with, ", ") + ")"
}

// options renders SET name = value, ... in name order (stable output).
func options(set map[string]string, env Env) string {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		v := env.fill(set[n])
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			parts[i] = fmt.Sprintf("%s = (%s)", n, v)
		} else {
			parts[i] = fmt.Sprintf("%s = %s", n, quoteString(v))
		}
	}
	return strings.Join(parts, ", ")
}

// StartSessionSQL starts a session; StopSessionSQL stops it (which
// flushes its buffers to the targets, and empties a ring_buffer).
func StartSessionSQL(name string) string {
	return fmt.Sprintf("ALTER EVENT SESSION %s ON SERVER STATE = START", quoteName(name))
}

// StopSessionSQL stops name if it is running.
func StopSessionSQL(name string) string {
	return fmt.Sprintf("IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = %s) ALTER EVENT SESSION %s ON SERVER STATE = STOP",
		quoteString(name), quoteName(name))
}

// DropSessionSQL stops and drops name if it exists: safe to run again,
// which a revert after a crash may do.
func DropSessionSQL(name string) string {
	return StopSessionSQL(name) + ";\n" +
		fmt.Sprintf("IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = %s) DROP EVENT SESSION %s ON SERVER", quoteString(name), quoteName(name))
}

// TracePath is the file of o's trace without its .trc extension, which
// sp_trace_create appends. Dashes, not underscores: fn_trace_gettable
// does not follow the rollover files of a name ending in an underscore
// and a number, and the documentation advises against underscores.
func TracePath(o observer.Observer, env Env) string {
	return env.LogDir + "obsbench-" + o.Name + "-" + env.Stamp
}

// TraceLifetime is how long after its apply a trace stops of itself.
// sp_trace_create's @stoptime: "If NULL, the trace runs until it is
// manually stopped or until the server shuts down", so a trace left by an
// obsbench that crashed, and not restored, would load every later run.
// The stop time is the server's clock (GETDATE()) plus a day and an hour:
// longer than any run obsbench makes (--duration and --alt-duration are
// at most 24h), so only an orphan reaches it. "Invalid stop time" (code
// 14) is a stop time "that has already happened", which this cannot be.
// https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-trace-create-transact-sql
const TraceLifetime = 25 * time.Hour

// traceFileRE is the file name TracePath gives an observer's trace, with
// the sequence number rollover appends: obsbench-<observer>-<stamp>_<n>.trc.
var traceFileRE = regexp.MustCompile(`^obsbench-(.+)-[0-9]{8}T[0-9]{6}(?:_[0-9]+)?\.trc$`)

// TraceObserver is the observer whose trace writes path (sys.traces.path,
// its current file), "" for a trace obsbench did not create.
func TraceObserver(path string) string {
	m := traceFileRE.FindStringSubmatch(path[strings.LastIndexAny(path, `\/`)+1:])
	if m == nil {
		return ""
	}
	return m[1]
}

// CreateTraceSQL is one batch that creates o's trace, sets its events and
// filters, starts it and returns its id. The sp_trace_* procedures take
// their arguments only in their declared types (@maxfilesize bigint, @on
// bit), hence the variables.
// https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-trace-create-transact-sql
// https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-trace-setevent-transact-sql
// https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-trace-setfilter-transact-sql
func CreateTraceSQL(o observer.Observer, env Env) string {
	t := traceOf(o)
	options, filecount := 0, "NULL"
	if t.Rollover {
		options = 2 // TRACE_FILE_ROLLOVER
		if t.MaxFiles > 0 {
			filecount = strconv.Itoa(t.MaxFiles)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "DECLARE @id int, @rc int, @maxfilesize bigint = %d, @stoptime datetime = DATEADD(hour, %d, GETDATE()), @on bit = 1;\n",
		t.MaxFileSizeMB, int(TraceLifetime/time.Hour))
	fmt.Fprintf(&b, "EXEC @rc = sp_trace_create @traceid = @id OUTPUT, @options = %d, @tracefile = %s, @maxfilesize = @maxfilesize, @stoptime = @stoptime, @filecount = %s;\n",
		options, quoteString(TracePath(o, env)), filecount)
	b.WriteString(checkRC("sp_trace_create"))
	for _, ev := range t.Events {
		for _, col := range traceColumnsOf(t, ev) {
			fmt.Fprintf(&b, "EXEC @rc = sp_trace_setevent @id, %d, %d, @on;\n", ev, col)
			b.WriteString(checkRC(fmt.Sprintf("sp_trace_setevent %d, %d", ev, col)))
		}
	}
	for i, f := range t.Filters {
		logical := 0
		if f.Or {
			logical = 1
		}
		// @value is sql_variant and must be of the column's own type: an
		// int column gets an int, a bigint column a bigint variable, a
		// text column N'...' (CheckTrace has refused any other).
		value := quoteString(env.fill(f.Value))
		if col, ok := traceColumnType(f.Column); ok && (col.typ == "int" || col.typ == "bigint") {
			value = fmt.Sprintf("@f%d", i)
			fmt.Fprintf(&b, "DECLARE %s %s = %s;\n", value, col.typ, env.fill(f.Value))
		}
		fmt.Fprintf(&b, "EXEC @rc = sp_trace_setfilter @id, %d, %d, %d, %s;\n", f.Column, logical, TraceComparisons[f.Op], value)
		b.WriteString(checkRC(fmt.Sprintf("sp_trace_setfilter column %d", f.Column)))
	}
	b.WriteString("EXEC @rc = sp_trace_setstatus @id, 1;\n" + checkRC("sp_trace_setstatus") + "SELECT @id")
	return b.String()
}

// checkRC fails the batch when the sp_trace_* call before it returned a
// code other than 0: they report a bad event, column or filter only so.
// A trace created before the failure is closed, so that none is left
// half set up (the revert would find it by its path anyway).
func checkRC(call string) string {
	return fmt.Sprintf("IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'%s failed with code %%d', 16, 1, @rc); RETURN; END;\n", call)
}

// StopTraceSQL stops the trace writing to path (flushing it to its file),
// if it is running.
func StopTraceSQL(path string) string {
	return fmt.Sprintf("DECLARE @id int = (SELECT id FROM sys.traces WHERE path LIKE %s AND status = 1);\nIF @id IS NOT NULL EXEC sp_trace_setstatus @id, 0", quoteString(likePrefix(path)))
}

// DropTraceSQL stops the trace writing to path and deletes its definition
// (status 0, then 2), found by its path so that a revert after a crash
// needs no id; its files stay.
func DropTraceSQL(path string) string {
	return fmt.Sprintf("DECLARE @id int = (SELECT id FROM sys.traces WHERE path LIKE %s);\n"+
		"IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END", quoteString(likePrefix(path)))
}

// likePrefix is a LIKE pattern matching path and its rollover files
// (path.trc, path_1.trc, ...), with LIKE's wildcards in path escaped.
func likePrefix(path string) string {
	return strings.NewReplacer("[", "[[]", "%", "[%]", "_", "[_]").Replace(path) + "%"
}

// ModifyReplicaSQL sets one replica's availability mode.
// https://learn.microsoft.com/sql/t-sql/statements/alter-availability-group-transact-sql
func ModifyReplicaSQL(group, replica, mode string) string {
	return fmt.Sprintf("ALTER AVAILABILITY GROUP %s MODIFY REPLICA ON %s WITH (AVAILABILITY_MODE = %s)", quoteName(group), quoteString(replica), mode)
}

// Event counting queries. Each returns one number.

// fileCountSQL counts the events named in names carrying tag in the
// event files matching pattern.
// https://learn.microsoft.com/sql/relational-databases/system-functions/sys-fn-xe-file-target-read-file-transact-sql
// An empty tag counts every event of those names (events without
// statement text, such as lock_acquired).
func fileCountSQL(pattern string, names []string, tag string) string {
	q := fmt.Sprintf("SELECT COUNT_BIG(*) FROM sys.fn_xe_file_target_read_file(%s, NULL, NULL, NULL) WHERE object_name IN (%s)",
		quoteString(pattern), quoteList(names))
	if tag == "" {
		return q
	}
	return q + " AND event_data LIKE " + quoteString("%"+likeEscape(tag)+"%")
}

// traceCountSQL counts the rows of the given event classes carrying tag
// in a trace's files from file on (DEFAULT: every rollover file after
// it).
// https://learn.microsoft.com/sql/relational-databases/system-functions/sys-fn-trace-gettable-transact-sql
// An empty tag counts every row of those classes.
func traceCountSQL(file string, events []string, tag string) string {
	q := fmt.Sprintf("SELECT COUNT_BIG(*) FROM sys.fn_trace_gettable(%s, DEFAULT) WHERE EventClass IN (%s)",
		quoteString(file), strings.Join(events, ", "))
	if tag == "" {
		return q
	}
	return q + " AND TextData LIKE " + quoteString("%"+likeEscape(tag)+"%")
}

// CurrentTraceFileSQL reads the file the trace at path writes now (or
// wrote last, once stopped): sys.traces.path names the current rollover
// file, path_12.trc, not the first.
// https://learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-traces-transact-sql
func CurrentTraceFileSQL(path string) string {
	return fmt.Sprintf("SELECT path FROM sys.traces WHERE path LIKE %s", quoteString(likePrefix(path)))
}

// TraceDroppedSQL reads the trace's dropped_event_count (NULL for a file
// trace).
func TraceDroppedSQL(path string) string {
	return fmt.Sprintf("SELECT dropped_event_count FROM sys.traces WHERE path LIKE %s", quoteString(likePrefix(path)))
}

// TraceFirstFile is the oldest file of the trace at base (without .trc)
// that the server still keeps, given current, the file it wrote last, and
// how many older files it deleted. sp_trace_create: a rollover trace
// names its files base.trc, base_1.trc, base_2.trc, ..., and "When
// max_rollover_files is specified, SQL Server tries to maintain no more
// than max_rollover_files trace files by deleting the oldest trace file
// before opening a new trace file"; fn_trace_gettable reads from "the
// initial trace file to be read" on, so it must be given one that exists.
// https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-trace-create-transact-sql
func TraceFirstFile(base, current string, maxFiles int) (first string, deleted int, err error) {
	rest, ok := strings.CutPrefix(current, base)
	if !ok || !strings.HasSuffix(rest, ".trc") {
		return "", 0, fmt.Errorf("trace file %s is not one of %s.trc and its rollover files", current, base)
	}
	seq := 0
	if n := strings.TrimSuffix(rest, ".trc"); n != "" {
		if seq, err = strconv.Atoi(strings.TrimPrefix(n, "_")); err != nil || !strings.HasPrefix(n, "_") || seq < 1 {
			return "", 0, fmt.Errorf("trace file %s is not one of %s.trc and its rollover files", current, base)
		}
	}
	if maxFiles <= 0 || seq+1 <= maxFiles {
		return base + ".trc", 0, nil
	}
	deleted = seq + 1 - maxFiles
	return fmt.Sprintf("%s_%d.trc", base, deleted), deleted, nil
}

// TraceRolloverNote says that a counted trace lost its oldest files to
// its max_files.
func TraceRolloverNote(deleted, maxFiles int) string {
	return fmt.Sprintf("the trace rolled over past max_files (%d files): the server deleted the oldest %d, whose events were not counted (not lost)", maxFiles, deleted)
}

// TargetDataSQL reads the in-memory data of one target of a running
// session (ring_buffer, event_counter, histogram XML).
func TargetDataSQL(session, target string) string {
	return fmt.Sprintf("SELECT CAST(t.target_data AS nvarchar(max)) FROM sys.dm_xe_session_targets t JOIN sys.dm_xe_sessions s ON s.address = t.event_session_address WHERE s.name = %s AND t.target_name = %s",
		quoteString(session), quoteString(target))
}

// freeBufferWait is the wait of a task that fires an event of a
// NO_EVENT_LOSS session whose buffers are all full, or of an audit that is
// delayed: it is the whole server's, not one session's.
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql
const freeBufferWait = "XE_BUFFERMGR_FREEBUF_EVENT"

// ServerWaitSQL reads the server's total of that wait, in milliseconds
// (wait_time_ms): a context line next to the session's own blocked time.
const ServerWaitSQL = "SELECT ISNULL(SUM(wait_time_ms), 0) FROM sys.dm_os_wait_stats WHERE wait_type = N'" + freeBufferWait + "'"

// SessionCountersSQL reads a running session's own counters: the events
// and whole buffers it dropped (ALLOW_MULTIPLE_EVENT_LOSS drops buffers),
// and blocked_event_fire_time, how long its event firing was blocked
// waiting for a free buffer (NO_EVENT_LOSS).
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-sessions-transact-sql
func SessionCountersSQL(session string) string {
	return fmt.Sprintf("SELECT dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions WHERE name = %s", quoteString(session))
}

// quoteName quotes an identifier with brackets.
func quoteName(s string) string { return "[" + strings.ReplaceAll(s, "]", "]]") + "]" }

// quoteString is an N'...' literal.
func quoteString(s string) string { return "N'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteString(n)
	}
	return strings.Join(q, ", ")
}

// likeEscape escapes LIKE's wildcards in a literal text.
func likeEscape(s string) string {
	return strings.NewReplacer("[", "[[]", "%", "[%]", "_", "[_]").Replace(s)
}

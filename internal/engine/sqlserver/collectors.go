package sqlserver

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The collectors read cumulative server views and diff them; nothing here
// clears or changes the server's statistics. Each parser takes rows as
// text, as queryStrings reads them and as testdata/rows records them.

// WaitStatsSQL reads the server's cumulative waits.
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql
const WaitStatsSQL = `SELECT wait_type, waiting_tasks_count, wait_time_ms, signal_wait_time_ms
FROM sys.dm_os_wait_stats WHERE waiting_tasks_count > 0 OR wait_time_ms > 0`

// WaitStat is one row of WaitStatsSQL.
type WaitStat struct {
	Type                    string
	Tasks, WaitMS, SignalMS int64
}

// ParseWaitStats reads WaitStatsSQL's rows.
func ParseWaitStats(rows [][]string) ([]WaitStat, error) {
	out := make([]WaitStat, 0, len(rows))
	for i, r := range rows {
		n, err := ints(r, 4, 1, i)
		if err != nil {
			return nil, fmt.Errorf("wait stats: %w", err)
		}
		out = append(out, WaitStat{Type: strings.TrimSpace(r[0]), Tasks: n[0], WaitMS: n[1], SignalMS: n[2]})
	}
	return out, nil
}

// WaitProfile maps wait type to its cumulative wait in microseconds, the
// unit of obsbench's engine wait profiles (the runner diffs them).
func WaitProfile(stats []WaitStat) map[string]int64 {
	out := make(map[string]int64, len(stats))
	for _, s := range stats {
		out[s.Type] = s.WaitMS * 1000
	}
	return out
}

// ErrWaitsCleared says the server's wait statistics were cleared while a
// window ran: sys.dm_os_wait_stats "can be reset by running" DBCC SQLPERF
// ('sys.dm_os_wait_stats', CLEAR), and "This command resets all counters
// to 0", so the window's waits cannot be told from the end's values.
var ErrWaitsCleared = errors.New("statistics were cleared during the window (DBCC SQLPERF ('sys.dm_os_wait_stats', CLEAR) resets every wait counter to 0): its waits are not known")

// DiffWaitProfile is each wait's growth from one WaitProfile to a later
// one, without the waits that did not grow (engine.WaitProfileDiffer).
// A wait that went down, or is gone (WaitStatsSQL leaves out the waits at
// 0), was cleared: ErrWaitsCleared.
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql
func (s *Server) DiffWaitProfile(before, after map[string]int64) (map[string]int64, error) {
	return DiffWaitProfile(before, after)
}

// DiffWaitProfile is Server.DiffWaitProfile.
func DiffWaitProfile(before, after map[string]int64) (map[string]int64, error) {
	out := map[string]int64{}
	for k, v0 := range before {
		v1, ok := after[k]
		if !ok || v1 < v0 {
			return nil, ErrWaitsCleared
		}
	}
	for k, v1 := range after {
		if d := v1 - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out, nil
}

// WaitDelta is what one wait type grew by over a window.
type WaitDelta struct {
	Type                    string
	Tasks, WaitMS, SignalMS int64
	// Background waits grow with elapsed time, not with the workload;
	// they are marked, never dropped (study 1 kept them).
	Background bool
}

// backgroundWaits are waits of the server's own idle or timer threads
// (Extended Events' own among them: XE_DISPATCHER_WAIT, XE_TIMER_EVENT):
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql
var backgroundWaits = []string{
	"BROKER_EVENTHANDLER", "BROKER_RECEIVE_WAITFOR", "BROKER_TASK_STOP", "BROKER_TO_FLUSH", "BROKER_TRANSMITTER",
	"CHECKPOINT_QUEUE", "CLR_AUTO_EVENT", "CLR_MANUAL_EVENT", "DIRTY_PAGE_POLL", "DISPATCHER_QUEUE_SEMAPHORE",
	"FT_IFTS_SCHEDULER_IDLE_WAIT", "HADR_FILESTREAM_IOMGR_IOCOMPLETION", "HADR_WORK_QUEUE", "LAZYWRITER_SLEEP",
	"LOGMGR_QUEUE", "ONDEMAND_TASK_QUEUE", "PVS_PREALLOCATE", "PWAIT_ALL_COMPONENTS_INITIALIZED",
	"PWAIT_EXTENSIBILITY_CLEANUP_TASK", "REQUEST_FOR_DEADLOCK_SEARCH", "RESOURCE_QUEUE", "SERVER_IDLE_CHECK",
	"SLEEP_BPOOL_FLUSH", "SLEEP_DBSTARTUP", "SLEEP_DCOMSTARTUP", "SLEEP_MASTERDBREADY", "SLEEP_MSDBSTARTUP",
	"SLEEP_SYSTEMTASK", "SLEEP_TASK", "SLEEP_TEMPDBSTARTUP", "SNI_HTTP_ACCEPT", "SOS_WORK_DISPATCHER",
	"SP_SERVER_DIAGNOSTICS_SLEEP", "SQLTRACE_BUFFER_FLUSH", "SQLTRACE_INCREMENTAL_FLUSH_SLEEP",
	"SQLTRACE_WAIT_ENTRIES", "WAIT_FOR_RESULTS", "WAITFOR", "WAIT_XTP_CKPT_CLOSE", "WAIT_XTP_HOST_WAIT",
	"WAIT_XTP_OFFLINE_CKPT_NEW_LOG", "WAIT_XTP_RECOVERY", "XE_DISPATCHER_JOIN", "XE_DISPATCHER_WAIT",
	"XE_LIVE_TARGET_TVF", "XE_TIMER_EVENT",
}

// Background says whether a wait type grows with elapsed time rather than
// with the workload.
func Background(wait string) bool {
	return slices.Contains(backgroundWaits, wait) || strings.HasPrefix(wait, "QDS_") && strings.Contains(wait, "SLEEP") ||
		strings.HasPrefix(wait, "PREEMPTIVE_XE_DISPATCHER")
}

// DiffWaits is each wait type's growth from before to after, largest wait
// time first, without the types that did not move. cleared says some
// counter went down: someone cleared the server's statistics (DBCC
// SQLPERF) during the window, and after's values are the growth since.
func DiffWaits(before, after []WaitStat) (deltas []WaitDelta, cleared bool) {
	prior := make(map[string]WaitStat, len(before))
	for _, w := range before {
		prior[w.Type] = w
	}
	for _, a := range after {
		b := prior[a.Type]
		d := WaitDelta{Type: a.Type, Tasks: a.Tasks - b.Tasks, WaitMS: a.WaitMS - b.WaitMS, SignalMS: a.SignalMS - b.SignalMS, Background: Background(a.Type)}
		if d.Tasks < 0 || d.WaitMS < 0 || d.SignalMS < 0 {
			cleared = true
			d.Tasks, d.WaitMS, d.SignalMS = a.Tasks, a.WaitMS, a.SignalMS
		}
		if d.Tasks == 0 && d.WaitMS == 0 && d.SignalMS == 0 {
			continue
		}
		deltas = append(deltas, d)
	}
	sort.Slice(deltas, func(i, j int) bool {
		if deltas[i].WaitMS != deltas[j].WaitMS {
			return deltas[i].WaitMS > deltas[j].WaitMS
		}
		return deltas[i].Type < deltas[j].Type
	})
	return deltas, cleared
}

// PerfCountersSQL reads the counters of the commit path and the request
// rate, the server's (_Total) and the dataset database's own. object_name,
// counter_name and instance_name are nchar(128), padded with blanks
// (sys-dm-os-performance-counters-transact-sql), and LIKE on Unicode data
// treats trailing blanks as significant ("LIKE (Transact-SQL)", pattern
// matching with LIKE: N'%:Databases' does not match 'SQLServer:Databases'
// followed by blanks), so each column is trimmed before LIKE; = ignores
// trailing blanks (comparisons pad the shorter side), so those stay.
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-performance-counters-transact-sql
// https://learn.microsoft.com/sql/t-sql/language-elements/like-transact-sql
func PerfCountersSQL(database string) string {
	return `SELECT RTRIM(object_name), RTRIM(counter_name), RTRIM(instance_name), cntr_value, cntr_type
FROM sys.dm_os_performance_counters
WHERE (RTRIM(object_name) LIKE N'%:SQL Statistics' AND counter_name = N'Batch Requests/sec')
   OR (RTRIM(object_name) LIKE N'%:Databases' AND instance_name IN (N'_Total', ` + quoteString(database) + `)
       AND counter_name IN (N'Transactions/sec', N'Log Flushes/sec', N'Log Bytes Flushed/sec', N'Write Transactions/sec'))
   OR (RTRIM(object_name) LIKE N'%:Database Replica' AND instance_name IN (N'_Total', ` + quoteString(database) + `)
       AND counter_name IN (N'Transaction Delay', N'Mirrored Write Transactions/sec'))`
}

// Counter types (cntr_type).
// https://learn.microsoft.com/windows/win32/wmisdk/countertype-qualifier
const (
	// PerfCounterBulkCount is cumulative: a rate is its growth over time.
	PerfCounterBulkCount = 272696576
	// PerfCounterLargeRawCount is a level.
	PerfCounterLargeRawCount = 65792
)

// PerfCounter is one row of PerfCountersSQL.
type PerfCounter struct {
	Object, Counter, Instance string
	Value, Type               int64
}

// ParsePerfCounters reads PerfCountersSQL's rows.
func ParsePerfCounters(rows [][]string) ([]PerfCounter, error) {
	out := make([]PerfCounter, 0, len(rows))
	for i, r := range rows {
		n, err := ints(r, 5, 3, i)
		if err != nil {
			return nil, fmt.Errorf("performance counters: %w", err)
		}
		out = append(out, PerfCounter{Object: strings.TrimSpace(r[0]), Counter: strings.TrimSpace(r[1]), Instance: strings.TrimSpace(r[2]), Value: n[0], Type: n[1]})
	}
	return out, nil
}

// counterNames are obsbench's names of the counters it reads.
var counterNames = map[string]string{
	"Batch Requests/sec": "batch_requests", "Transactions/sec": "transactions", "Log Flushes/sec": "log_flushes",
	"Log Bytes Flushed/sec": "log_bytes_flushed", "Write Transactions/sec": "write_transactions",
	"Transaction Delay": "transaction_delay_ms", "Mirrored Write Transactions/sec": "mirrored_write_transactions",
}

// CounterMap names the counters for the runner: cumulative ones under
// their names (the runner divides their growth by the window), levels
// under "gauge_"+name (recorded as the window's end value). Per-database
// counters count the server's _Total under their names, and database's
// own instance under "db_"+name as well (the availability group's
// database: its log flushes and transaction delay are the study's); with
// no _Total, the instances are summed. Other counter types are left out.
func CounterMap(cs []PerfCounter, database string) map[string]float64 {
	out := map[string]float64{}
	hasTotal := map[string]bool{}
	for _, c := range cs {
		if c.Instance == "_Total" {
			hasTotal[c.Counter] = true
		}
	}
	for _, c := range cs {
		name, ok := counterNames[c.Counter]
		if !ok {
			continue
		}
		var names []string
		if !hasTotal[c.Counter] || c.Instance == "_Total" {
			names = append(names, name)
		}
		if database != "" && c.Instance == database {
			names = append(names, "db_"+name)
		}
		for _, n := range names {
			switch c.Type {
			case PerfCounterBulkCount:
				out[n] += float64(c.Value)
			case PerfCounterLargeRawCount:
				out["gauge_"+n] += float64(c.Value)
			}
		}
	}
	return out
}

// Rates turns two CounterMaps seconds apart into per-second rates, as the
// runner does (internal/experiment/probe.go, record): a cumulative
// counter's growth per second (a counter that went down was reset and is
// left out), a gauge's end value under its plain name.
func Rates(before, after map[string]float64, seconds float64) map[string]float64 {
	out := map[string]float64{}
	for k, v1 := range after {
		if name, gauge := strings.CutPrefix(k, "gauge_"); gauge {
			out[name] = v1
			continue
		}
		if v0, ok := before[k]; ok && v1 >= v0 && seconds > 0 {
			out[k] = (v1 - v0) / seconds
		}
	}
	return out
}

// AvgTransactionDelayMS is the mean delay a synchronous replica added to
// each mirrored write transaction: the growth of Transaction Delay (ms)
// over that of Mirrored Write Transactions/sec, from two Rates.
// The dataset database's own counters are used when they are there:
// other databases of the group add their own delays to the sum.
func AvgTransactionDelayMS(rates map[string]float64) (float64, bool) {
	if tx := rates["db_mirrored_write_transactions"]; tx > 0 {
		return rates["db_transaction_delay_ms"] / tx, true
	}
	tx := rates["mirrored_write_transactions"]
	if tx <= 0 {
		return 0, false
	}
	return rates["transaction_delay_ms"] / tx, true
}

// SchedulerCPUSQL reads the scheduler monitor's records (one a minute)
// with their age in ms: the record's timestamp is in the ms_ticks clock of
// sys.dm_os_sys_info.
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-ring-buffers-transact-sql
const SchedulerCPUSQL = `SELECT si.ms_ticks - rb.[timestamp], CAST(rb.record AS nvarchar(max))
FROM sys.dm_os_ring_buffers rb CROSS JOIN sys.dm_os_sys_info si
WHERE rb.ring_buffer_type = N'RING_BUFFER_SCHEDULER_MONITOR' AND rb.record LIKE N'%<SystemHealth>%'`

// CPUSample is one scheduler-monitor record.
type CPUSample struct {
	Age        time.Duration // how long ago it was written
	ProcessPct int           // SQL Server's own CPU, % of the machine
	IdlePct    int
}

// ParseSchedulerRecord reads ProcessUtilization and SystemIdle from a
// RING_BUFFER_SCHEDULER_MONITOR record.
func ParseSchedulerRecord(record string) (process, idle int, err error) {
	var r struct {
		Health struct {
			Process *int `xml:"ProcessUtilization"`
			Idle    *int `xml:"SystemIdle"`
		} `xml:"SchedulerMonitorEvent>SystemHealth"`
	}
	if err := xml.Unmarshal([]byte(record), &r); err != nil {
		return 0, 0, fmt.Errorf("scheduler monitor record: %w", err)
	}
	if r.Health.Process == nil || r.Health.Idle == nil {
		return 0, 0, errors.New("scheduler monitor record: no SystemHealth/ProcessUtilization and SystemIdle")
	}
	return *r.Health.Process, *r.Health.Idle, nil
}

// ParseSchedulerRows reads SchedulerCPUSQL's rows.
func ParseSchedulerRows(rows [][]string) ([]CPUSample, error) {
	out := make([]CPUSample, 0, len(rows))
	for i, r := range rows {
		if len(r) != 2 {
			return nil, fmt.Errorf("scheduler monitor: row %d has %d columns, want 2", i+1, len(r))
		}
		n, err := ints(r[:1], 1, 0, i)
		if err != nil {
			return nil, fmt.Errorf("scheduler monitor: %w", err)
		}
		p, idle, err := ParseSchedulerRecord(r[1])
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i+1, err)
		}
		out = append(out, CPUSample{Age: time.Duration(n[0]) * time.Millisecond, ProcessPct: p, IdlePct: idle})
	}
	return out, nil
}

// ServerCPU averages SQL Server's CPU over the records written within
// window; ok is false when there are none. Coarse (a record a minute): used
// only because the server's process is not on this machine.
func ServerCPU(samples []CPUSample, window time.Duration) (pct float64, n int, ok bool) {
	var sum int
	for _, s := range samples {
		if s.Age >= 0 && s.Age <= window {
			sum += s.ProcessPct
			n++
		}
	}
	if n == 0 {
		return 0, 0, false
	}
	return float64(sum) / float64(n), n, true
}

// ints parses the columns from first on of row i (0-based) as integers;
// the row must have want columns.
func ints(r []string, want, first, i int) ([]int64, error) {
	if len(r) != want {
		return nil, fmt.Errorf("row %d has %d columns, want %d", i+1, len(r), want)
	}
	var out []int64
	for j := first; j < want; j++ {
		v, err := strconv.ParseInt(strings.TrimSpace(r[j]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("row %d column %d: %q is not an integer", i+1, j+1, r[j])
		}
		out = append(out, v)
	}
	return out, nil
}

// XE target data (sys.dm_xe_session_targets.target_data).
// https://learn.microsoft.com/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server

// RingBufferStats are the ring_buffer target's own counts.
type RingBufferStats struct {
	TotalProcessed, EventCount, Dropped int64
	Truncated                           bool // the XML was cut at 4 MB: not every event is in it
}

// ParseRingBuffer reads the RingBufferTarget element's attributes.
func ParseRingBuffer(data string) (RingBufferStats, error) {
	var st RingBufferStats
	err := walkXML(data, func(d *xml.Decoder, e xml.StartElement) error {
		if e.Name.Local != "RingBufferTarget" {
			return nil
		}
		for _, a := range e.Attr {
			var err error
			switch a.Name.Local {
			case "totalEventsProcessed":
				st.TotalProcessed, err = strconv.ParseInt(a.Value, 10, 64)
			case "eventCount":
				st.EventCount, err = strconv.ParseInt(a.Value, 10, 64)
			case "droppedCount":
				st.Dropped, err = strconv.ParseInt(a.Value, 10, 64)
			case "truncated":
				st.Truncated = a.Value == "1"
			}
			if err != nil {
				return fmt.Errorf("RingBufferTarget %s=%q: %w", a.Name.Local, a.Value, err)
			}
		}
		return errStop
	})
	return st, err
}

// CountRingEvents counts the ring buffer's events named in names (without
// package) whose data or actions contain tag. The XML is read as a stream:
// a ring buffer's can be megabytes.
func CountRingEvents(data string, names []string, tag string) (int64, error) {
	var n int64
	err := walkXML(data, func(d *xml.Decoder, e xml.StartElement) error {
		if e.Name.Local != "event" || !slices.Contains(names, attr(e, "name")) {
			return nil
		}
		var body struct {
			Inner string `xml:",innerxml"`
		}
		if err := d.DecodeElement(&body, &e); err != nil {
			return err
		}
		if strings.Contains(body.Inner, tag) {
			n++
		}
		return nil
	})
	return n, err
}

// CounterTotal sums the event_counter target's counts of the events named.
func CounterTotal(data string, names []string) (int64, error) {
	var n int64
	err := walkXML(data, func(d *xml.Decoder, e xml.StartElement) error {
		if e.Name.Local != "Event" || !slices.Contains(names, attr(e, "name")) {
			return nil
		}
		c, err := strconv.ParseInt(attr(e, "count"), 10, 64)
		if err != nil {
			return fmt.Errorf("event_counter %s count=%q: %w", attr(e, "name"), attr(e, "count"), err)
		}
		n += c
		return nil
	})
	return n, err
}

// HistogramSlots reads the histogram target's slots: value -> count.
func HistogramSlots(data string) (map[string]int64, error) {
	out := map[string]int64{}
	err := walkXML(data, func(d *xml.Decoder, e xml.StartElement) error {
		if e.Name.Local != "Slot" {
			return nil
		}
		var slot struct {
			Count int64  `xml:"count,attr"`
			Value string `xml:"value"`
		}
		if err := d.DecodeElement(&slot, &e); err != nil {
			return fmt.Errorf("histogram slot: %w", err)
		}
		out[slot.Value] += slot.Count
		return nil
	})
	return out, err
}

// XESessionLossSQL reads what each running session dropped and how long
// its firing threads were blocked (NO_EVENT_LOSS).
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-sessions-transact-sql
const XESessionLossSQL = `SELECT name, dropped_event_count, dropped_buffer_count, blocked_event_fire_time FROM sys.dm_xe_sessions`

// XESessionLoss is one row of XESessionLossSQL.
type XESessionLoss struct {
	Name                          string
	DroppedEvents, DroppedBuffers int64
	// BlockedFireTime is blocked_event_fire_time as the server gives
	// it: its documentation names no unit.
	BlockedFireTime int64
}

// ParseXESessionLoss reads XESessionLossSQL's rows.
func ParseXESessionLoss(rows [][]string) ([]XESessionLoss, error) {
	out := make([]XESessionLoss, 0, len(rows))
	for i, r := range rows {
		n, err := ints(r, 4, 1, i)
		if err != nil {
			return nil, fmt.Errorf("XE sessions: %w", err)
		}
		out = append(out, XESessionLoss{Name: r[0], DroppedEvents: n[0], DroppedBuffers: n[1], BlockedFireTime: n[2]})
	}
	return out, nil
}

var errStop = errors.New("stop")

// walkXML calls f for every start element of data, in order; f may
// consume the element with d.DecodeElement, or return errStop.
func walkXML(data string, f func(d *xml.Decoder, e xml.StartElement) error) error {
	if strings.TrimSpace(data) == "" {
		return errors.New("empty target data (is the session running?)")
	}
	d := xml.NewDecoder(strings.NewReader(data))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("target data XML: %w", err)
		}
		if e, ok := tok.(xml.StartElement); ok {
			if err := f(d, e); err != nil {
				if errors.Is(err, errStop) {
					return nil
				}
				return err
			}
		}
	}
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// RingNotes say what a ring_buffer's count cannot tell. A ring that
// wrapped pushed its oldest events out to make room (droppedCount; they
// were recorded, not lost by the session), and target_data's XML is cut
// at 4 MB (truncated="1"): events left out of either are not counted.
// https://learn.microsoft.com/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server#ring_buffer-target
func RingNotes(st RingBufferStats) []string {
	var out []string
	if st.Dropped > 0 {
		out = append(out, fmt.Sprintf("the ring_buffer wrapped: it received %d events and pushed out the oldest %d; the count covers the %d it held (pushed out is not lost)",
			st.TotalProcessed, st.Dropped, st.EventCount))
	}
	if st.Truncated {
		out = append(out, "the ring_buffer's XML was cut at 4 MB: the events left out of it were not counted (not lost)")
	}
	return out
}

// RolloverNote says, when an event_file target's files reached its
// max_rollover_files, that from then on the server deletes the oldest file
// as it opens a new one: the events of a deleted file cannot be counted,
// which is not loss. The files kept do not tell whether one was deleted
// yet (at max_rollover_files none need have been), so the note says it
// may have been. "" below the limit.
// https://learn.microsoft.com/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server#event_file-target
func RolloverNote(files, maxFiles int) string {
	if maxFiles <= 0 || files < maxFiles {
		return ""
	}
	return fmt.Sprintf("the event_file reached max_rollover_files (%d files): from then on the server deletes the oldest file as it opens another, so the events of any file it deleted were not counted (not lost); the files kept do not tell whether it has", maxFiles)
}

// defaultHistogramSlots is the histogram target's slots when unset.
const defaultHistogramSlots = 256

// HistogramSlotCount is how many groups a histogram with the slots option
// given ("" for the default) keeps: "The 'slots' parameter default is
// 256", "the slot number is rounded up to the next power of 2".
// https://learn.microsoft.com/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server#histogram-target
func HistogramSlotCount(option string) int {
	n, err := strconv.Atoi(option)
	if err != nil || n <= 0 {
		n = defaultHistogramSlots
	}
	slots := 1
	for slots < n {
		slots *= 2
	}
	return slots
}

// HistogramNote says, when a histogram's groups fill its slots, that it
// counted only the events of those groups: slots "indicating the maximum
// number of groupings to retain. When this value is reached, new events
// that do not belong to the existing groups are ignored". "" otherwise.
// https://learn.microsoft.com/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server#histogram-target
func HistogramNote(groups, slots int) string {
	if groups < slots {
		return ""
	}
	return fmt.Sprintf("the histogram filled its %d slots: new events that do not belong to the existing groups are ignored, so its sum leaves them out (not lost)", slots)
}

// CounterNote labels an event_counter's number for what it is.
const CounterNote = "the target counts every event its predicate lets through, from the workload's sessions and any other's"

package mariadb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/poll"
	"github.com/obsbench/obsbench/internal/result"
)

// EventCount counts the events an applied observer records during a run.
type EventCount struct {
	s       *Server
	counter observer.EventCounter
	tag     string
	path    string           // the log file; rotated files are path.N
	offsets map[uint64]int64 // inode -> size at the start: a rotated file keeps its inode
	before  int64            // sql: the counter at the start
	mark    string           // sql with mark: the mark's value
	lost0   int64
}

// StartEvents begins counting the events of a's observer for statements
// carrying tag. It returns nil when the observer records no events.
func (a *Applied) StartEvents(ctx context.Context, tag string) (engine.EventCounter, error) {
	if a.obs.Events == nil {
		return nil, nil
	}
	e := &EventCount{s: a.s, counter: *a.obs.Events, tag: tag}
	var err error
	if e.counter.Lost != "" {
		if e.lost0, err = a.s.countSQL(ctx, e.counter.Lost); err != nil {
			return nil, err
		}
	}
	switch e.counter.Source {
	case observer.SourceServerLog:
		if e.path, err = a.s.logPath(ctx, e.counter.FileSetting); err != nil {
			return nil, err
		}
		e.offsets, err = e.sizes()
		return e, err
	case observer.SourceSQL:
		if e.counter.Mark != "" {
			n, err := a.s.countSQL(ctx, e.counter.Mark)
			e.mark = strconv.FormatInt(n, 10)
			return e, err
		}
		e.before, err = e.settled(ctx)
		return e, err
	}
	return nil, fmt.Errorf("events source %q is not available on mariadb", e.counter.Source)
}

func (e *EventCount) query() string {
	return strings.ReplaceAll(e.counter.QueryOf(e.tag), observer.MarkPlaceholder, e.mark)
}

// Count returns the events recorded since StartEvents. For a log file it
// first waits until the file stops growing: the server writes each event
// before the statement completes, but a slow device may still be busy.
func (e *EventCount) Count(ctx context.Context) (int64, error) {
	if e.counter.Source == observer.SourceSQL {
		return e.countSQL(ctx)
	}
	files, err := e.CountFiles(ctx)
	return result.Records(files), err
}

// CountFiles is Count file by file, oldest first (path.N, ..., path.1,
// path), with what each file grew by; nil for events counted by a query.
// A file the server deleted (more rotations than it keeps) is not
// counted: its records show as lost.
func (e *EventCount) CountFiles(ctx context.Context) ([]result.FileCount, error) {
	if e.counter.Source == observer.SourceSQL {
		return nil, nil
	}
	if err := engine.WaitLogStable(ctx, e.totalSize); err != nil {
		return nil, err
	}
	re, err := e.counter.MatchOf(e.tag)
	if err != nil {
		return nil, err
	}
	files, err := e.files()
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return rotation(files[i].path, e.path) > rotation(files[j].path, e.path) })
	out := []result.FileCount{} // not nil: counted, maybe nothing
	for _, f := range files {
		if f.size <= e.offsets[f.inode] {
			continue
		}
		n, err := engine.CountLogMatches(f.path, e.offsets[f.inode], []byte(e.tag), re)
		if err != nil {
			return nil, err
		}
		out = append(out, result.FileCount{Name: filepath.Base(f.path), Records: n, Bytes: f.size - e.offsets[f.inode]})
	}
	return out, nil
}

// countSQL reads the counter query once the run's sessions have ended: a
// session's last statement can reach its client before performance_schema
// has recorded its end, and performance_schema folds a session's
// statements into its global summaries only as the session's thread ends,
// after the client has gone. A ring buffer's count (with a mark) is then
// read once: each further statement would push the workload's events out.
// A cumulative counter is read until it holds still.
func (e *EventCount) countSQL(ctx context.Context) (int64, error) {
	if err := e.s.waitSessionsGone(ctx); err != nil {
		return 0, err
	}
	if e.counter.Mark != "" {
		return e.s.countSQL(ctx, e.query())
	}
	n, err := e.settled(ctx)
	return n - e.before, err
}

// settled reads a cumulative counter until it holds still.
func (e *EventCount) settled(ctx context.Context) (int64, error) {
	var n int64
	err := engine.WaitLogStable(ctx, func() (int64, error) {
		var err error
		n, err = e.s.countSQL(ctx, e.query())
		return n, err
	})
	return n, err
}

// waitSessionsGone waits until no session but the caller's is connected to
// the dataset database and no session anywhere is being taken down: the
// driver's sessions have closed, but their server threads end a moment
// later. A session leaves the processlist first and its
// performance_schema thread, whose statement counts are then folded into
// the global summaries, only after (MariaDB's do_handle_one_connection:
// unlink_thd, then Thread_cache::park deletes the instrumentation): a
// one_connection thread with no processlist entry is one being taken down.
func (s *Server) waitSessionsGone(ctx context.Context) error {
	conn, done, err := s.control(ctx)
	if err != nil {
		return err
	}
	defer done()
	// The polls stay out of performance_schema where the server lets this
	// session say so: recorded in a ring buffer of statements, each would
	// push out one of the run's events.
	_, _ = conn.ExecContext(ctx, "UPDATE performance_schema.threads SET INSTRUMENTED = 'NO' WHERE PROCESSLIST_ID = CONNECTION_ID()")
	// The name is a literal, not a parameter: a parameter would make this a
	// prepared statement, counted by the statement/com/Execute the
	// performance_schema observers count.
	q := "SELECT (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = " + quoteLiteral(s.database) + " AND ID <> CONNECTION_ID())" +
		" + (SELECT COUNT(*) FROM performance_schema.threads t WHERE t.NAME = 'thread/sql/one_connection'" +
		" AND NOT EXISTS (SELECT 1 FROM information_schema.PROCESSLIST p WHERE p.ID = t.PROCESSLIST_ID))"
	var left int
	return poll.Until(ctx, 10*time.Second, 20*time.Millisecond, func() (bool, error) {
		if err := conn.QueryRowContext(ctx, q).Scan(&left); err != nil {
			return false, fmt.Errorf("wait for the run's sessions to end: %w", err)
		}
		return left == 0, nil
	}, func() error {
		return fmt.Errorf("%d session(s) still connected to database %s, or being taken down, 10s after the run", left, s.database)
	})
}

// rotation is the number of a rotated file (path.N), 0 for path itself.
func rotation(file, path string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(file, path), "."))
	return n
}

// EngineLost is the growth of the observer's lost-events counter.
func (e *EventCount) EngineLost(ctx context.Context) (int64, bool, error) {
	if e.counter.Lost == "" {
		return 0, false, nil
	}
	n, err := e.s.countSQL(ctx, e.counter.Lost)
	return n - e.lost0, err == nil, err
}

func (s *Server) countSQL(ctx context.Context, query string) (int64, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	var n float64
	if err := conn.QueryRowContext(ctx, query).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events with %q: %w", query, err)
	}
	return int64(n), nil
}

// logPath is the absolute path the server setting names, if the file is
// on this machine.
func (s *Server) logPath(ctx context.Context, setting string) (string, error) {
	if setting == "" {
		return "", errors.New("a server-log event counter on mariadb needs file_setting: (e.g. general_log_file)")
	}
	conn, done, err := s.control(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	var data, path string
	if err := conn.QueryRowContext(ctx, "SELECT @@datadir, @@GLOBAL."+setting).Scan(&data, &path); err != nil {
		return "", fmt.Errorf("find the file of %s: %w", setting, err)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(data, path)
	}
	if _, err := os.Stat(data); err != nil {
		return "", fmt.Errorf("%w: data directory %s is not on this machine", engine.ErrNotCollected, data)
	}
	return path, nil
}

type logFile struct {
	path  string
	inode uint64
	size  int64
}

// files are the log file and those rotated away from it (path.1, ...).
func (e *EventCount) files() ([]logFile, error) { return rotatedFiles(e.path), nil }

// rotatedFiles are the file at path and those rotated away from it
// (path.1, path.2, ...), with their inodes and sizes.
func rotatedFiles(path string) []logFile {
	matches, _ := filepath.Glob(path + "*")
	var out []logFile
	for _, m := range matches {
		if m != path && !rotatedRE.MatchString(strings.TrimPrefix(m, path)) {
			continue
		}
		info, err := os.Stat(m)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		out = append(out, logFile{path: m, inode: info.Sys().(*syscall.Stat_t).Ino, size: info.Size()})
	}
	return out
}

var rotatedRE = regexp.MustCompile(`^\.[0-9]+$`)

func (e *EventCount) sizes() (map[uint64]int64, error) {
	files, err := e.files()
	out := map[uint64]int64{}
	for _, f := range files {
		out[f.inode] = f.size
	}
	return out, err
}

// totalSize is the size of every file counted, together.
func (e *EventCount) totalSize() (int64, error) {
	sizes, err := e.sizes()
	var sum int64
	for _, n := range sizes {
		sum += n
	}
	return sum, err
}

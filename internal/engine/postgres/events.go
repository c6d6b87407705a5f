package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/poll"
	"github.com/obsbench/obsbench/internal/result"
)

// EventCount counts the events an applied observer records during a run.
// StartEvents marks where the run begins; Count reads what was recorded since.
type EventCount struct {
	s       *Server
	counter observer.EventCounter
	tag     string
	logDir  string
	only    string           // the one file in logDir to count, if set
	offsets map[string]int64 // log file -> size at the start
	before  int64            // SQL counter value at the start
}

// StartEvents begins counting the events of a's observer for statements
// carrying tag. It returns nil when the observer records no events.
func (a *Applied) StartEvents(ctx context.Context, tag string) (engine.EventCounter, error) {
	if a.obs.Events == nil {
		return nil, nil
	}
	e := &EventCount{s: a.s, counter: *a.obs.Events, tag: tag}
	switch e.counter.Source {
	case observer.SourceServerLog:
		dir, err := a.s.logDirectory(ctx)
		if err != nil {
			return nil, err
		}
		e.logDir = dir
		e.offsets, err = e.sizes()
		return e, err
	case observer.SourceStream:
		if a.s.host == nil {
			return nil, fmt.Errorf("%w: the server's log stream is read only on a managed server", engine.ErrNotCollected)
		}
		path := a.s.host.StreamLog()
		e.logDir, e.only = filepath.Dir(path), filepath.Base(path)
		var err error
		e.offsets, err = e.sizes()
		return e, err
	case observer.SourceSQL:
		n, err := a.s.countSQL(ctx, e.query())
		e.before = n
		return e, err
	}
	return nil, fmt.Errorf("unknown event source %q", e.counter.Source)
}

func (e *EventCount) query() string { return e.counter.QueryOf(e.tag) }

// Count returns the events recorded since StartEvents. For log files it
// first waits until the logging collector has written everything sent to
// it: the files stop growing.
func (e *EventCount) Count(ctx context.Context) (int64, error) {
	if e.counter.Source == observer.SourceSQL {
		n, err := e.s.countSQL(ctx, e.query())
		return n - e.before, err
	}
	files, err := e.CountFiles(ctx)
	return result.Records(files), err
}

// CountFiles is Count file by file, in the order the server wrote them
// (names of rotated files sort by time), with what each file grew by; nil
// for events counted by a query.
func (e *EventCount) CountFiles(ctx context.Context) ([]result.FileCount, error) {
	if e.counter.Source == observer.SourceSQL {
		return nil, nil // not in files: Count
	}
	marked, err := e.written(ctx)
	if err != nil {
		return nil, err
	}
	re, err := e.counter.MatchOf(e.tag)
	if err != nil {
		return nil, err
	}
	sizes, err := e.sizes()
	if err != nil {
		return nil, err
	}
	out := []result.FileCount{} // not nil: counted, maybe nothing
	for _, name := range slices.Sorted(maps.Keys(sizes)) {
		grew := sizes[name] - e.offsets[name]
		if grew <= 0 {
			continue
		}
		n, err := engine.CountLogMatches(filepath.Join(e.logDir, name), e.offsets[name], []byte(e.tag), re)
		if err != nil {
			return nil, err
		}
		if n == 0 && name == marked {
			continue // begun by a rotation after the run, for the marker
		}
		out = append(out, result.FileCount{Name: name, Records: n, Bytes: grew})
	}
	return out, nil
}

// written waits until the server's log holds every record of the run.
// The logging collector writes the files after the statements complete,
// and a writer that waits on a slow device or for the CPU can pause for
// longer than a short quiet spell. So the server logs a marker after the
// run: backends hand records to the collector through one pipe, in
// order, so a file that holds the marker holds every record sent before
// it. A log that has not grown for logQuiet, marker or not, is as
// written as it will be (a full disk; log_min_messages above LOG); where
// the marker cannot be logged (no PL/pgSQL) or read (the stream: a lossy
// one may drop it), the files' size settling stands in.
func (e *EventCount) written(ctx context.Context) (marked string, err error) {
	if e.counter.Source != observer.SourceServerLog {
		return "", engine.WaitLogStable(ctx, e.totalSize)
	}
	marker := fmt.Sprintf("obsbench log marker %d-%d", os.Getpid(), time.Now().UnixNano())
	if err := e.s.logMarker(ctx, marker); err != nil {
		return "", engine.WaitLogStable(ctx, e.totalSize)
	}
	find := engine.LogFinder{Marker: []byte(marker)}
	last, grew := int64(-1), time.Now()
	err = poll.Until(ctx, 30*time.Second, 50*time.Millisecond, func() (bool, error) {
		sizes, err := e.sizes()
		if err != nil {
			return false, err
		}
		var total int64
		for name, size := range sizes {
			total += size
			if size <= e.offsets[name] {
				continue // not written since the run began
			}
			if found, err := find.Find(filepath.Join(e.logDir, name), e.offsets[name]); err != nil || found {
				marked = name
				return found, err
			}
		}
		if total != last {
			last, grew = total, time.Now()
			return false, nil
		}
		return time.Since(grew) >= logQuiet, nil
	}, func() error {
		return fmt.Errorf("the server's log in %s kept growing for 30s after the run without obsbench's marker", e.logDir)
	})
	if err != nil {
		return "", err
	}
	return marked, nil
}

// logQuiet is how long a log without the marker must stay the same size to
// count as written: ten times the quiet spell that a starved collector
// outlasted.
const logQuiet = 3 * time.Second

// logMarker makes the server log marker, at level LOG, after everything
// logged before.
func (s *Server) logMarker(ctx context.Context, marker string) error {
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DO $$BEGIN RAISE LOG '%', "+quoteLiteral(marker)+"; END$$")
	return err
}

func (s *Server) countSQL(ctx context.Context, query string) (int64, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events with %q: %w", query, err)
	}
	return n, nil
}

// logDirectory is the absolute path of the server's log_directory, if it is
// on this machine.
func (s *Server) logDirectory(ctx context.Context) (string, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var data, dir string
	if err := conn.QueryRow(ctx, "SELECT current_setting('data_directory'), current_setting('log_directory')").Scan(&data, &dir); err != nil {
		return "", fmt.Errorf("find log directory: %w", err)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(data, dir)
	}
	if _, err := os.Stat(data); err != nil {
		return "", fmt.Errorf("%w: data directory %s is not on this machine", engine.ErrNotCollected, data)
	}
	return dir, nil
}

// sizes is the size of every file counted.
func (e *EventCount) sizes() (map[string]int64, error) {
	all, err := logSizes(e.logDir)
	if err != nil || e.only == "" {
		return all, err
	}
	return map[string]int64{e.only: all[e.only]}, nil
}

func logSizes(dir string) (map[string]int64, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read log directory: %w", err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			out[e.Name()] = info.Size()
		}
	}
	return out, nil
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

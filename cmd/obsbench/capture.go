package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/workload"
)

// captureCmd turns statement logs into a capture file: obsbench capture
// [flags] LOG... (files, or directories of them).
func captureCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("obsbench capture", flag.ContinueOnError)
	out := fs.String("out", "", "capture file to write (required; an existing file is not overwritten)")
	source := fs.String("source", "auto", "log format: csvlog or jsonlog (PostgreSQL, log_statement=all or log_min_duration_statement=0), general-log (MariaDB), or auto (by extension: .csv, .json, else general-log)")
	ds := fs.String("dataset", "", "the obsbench dataset the workload ran on, recorded so that a replay on a managed server loads it")
	tag := fs.String("tag", "", "a string in every statement of the workload, recorded so that observers' records of a replay are counted by it")
	wl := fs.String("workload", "", "the obsbench workload captured, recorded so that a replay runs its set-up (its dataset, tag and functions)")
	dbs := fs.String("database", "", "keep only sessions on these databases (comma-separated)")
	users := fs.String("user", "", "keep only sessions of these users (comma-separated)")
	apps := fs.String("app", "", "keep only sessions of these application names (comma-separated; PostgreSQL)")
	exUsers := fs.String("exclude-user", "obsbench_system", "drop sessions of these users (comma-separated)")
	exApps := fs.String("exclude-app", "", "drop sessions of these application names (comma-separated; PostgreSQL)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *out == "" {
		return usagef("capture needs --out FILE")
	}
	if fs.NArg() == 0 {
		return usagef("capture needs the log files (or directories of them) to read")
	}
	files, err := logFiles(fs.Args())
	if err != nil {
		return err
	}
	src := *source
	if src == "auto" {
		src = sourceOf(files[0])
	}
	for _, f := range files {
		if s := sourceOf(f); *source == "auto" && s != src {
			return usagef("%s looks like %s, %s like %s: give logs of one format, or --source", files[0], src, f, s)
		}
	}
	w, err := os.OpenFile(*out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return usagef("--out %s exists: obsbench does not overwrite a capture", *out)
		}
		return err
	}
	h := capture.Header{Engine: capture.EngineOf(src), Source: src, Dataset: *ds, Tag: *tag, Workload: *wl}
	if *wl != "" {
		m, err := workload.Lookup(*wl)
		if err != nil {
			w.Close()
			os.Remove(*out)
			return usageError{err}
		}
		if h.Dataset == "" {
			h.Dataset = m.Dataset
		}
		if h.Tag == "" {
			h.Tag = m.Tag
		}
	}
	cw := capture.NewWriter(w, h)
	p, err := capture.NewParser(src, capture.Filter{
		Databases: splitList(*dbs), Users: splitList(*users), Applications: splitList(*apps),
		ExcludeUsers: splitList(*exUsers), ExcludeApps: splitList(*exApps),
	}, cw)
	if err != nil {
		w.Close()
		os.Remove(*out)
		return usageError{err}
	}
	began := time.Now()
	var read atomic.Int64
	stop := progress(stderr, &read, began)
	for _, f := range files {
		if err = parseLog(ctx, p, f, &read); err != nil {
			break
		}
	}
	stop()
	if err == nil {
		err = cw.Close()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(*out) // half a capture is no capture
		return err
	}
	st := p.Stats()
	info, _ := os.Stat(*out)
	secs := time.Since(began).Seconds()
	fmt.Fprintf(stdout, "captured %d statements of %d sessions (%d connects, %d disconnects; %d log entries skipped) from %.1f MB of %s in %.1f s (%.0f MB/s): %s, %.1f MB\n",
		st.Statements, st.Sessions, st.Connects, st.Disconnects, st.Skipped, float64(read.Load())/1e6, src, secs,
		float64(read.Load())/1e6/max(secs, 1e-3), *out, float64(info.Size())/1e6)
	if st.Statements == 0 {
		return fmt.Errorf("no statements in %s: the server must log them (PostgreSQL: log_statement=all or log_min_duration_statement=0; MariaDB: general_log=ON), and the filters must keep some sessions", strings.Join(files, ", "))
	}
	return nil
}

// logFiles expands directories into their log files, sorted by name
// (PostgreSQL's rotated file names sort by time).
func logFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return nil, usagef("log %s: %v", a, err)
		}
		if !info.IsDir() {
			out = append(out, a)
			continue
		}
		var in []string
		for _, pat := range []string{"*.csv", "*.json", "*.log"} {
			m, _ := filepath.Glob(filepath.Join(a, pat))
			in = append(in, m...)
		}
		if len(in) == 0 {
			return nil, usagef("log directory %s has no *.csv, *.json or *.log files", a)
		}
		sort.Strings(in)
		out = append(out, in...)
	}
	return out, nil
}

// sourceOf guesses a log's format from its name.
func sourceOf(path string) string {
	switch filepath.Ext(path) {
	case ".csv":
		return "csvlog"
	case ".json":
		return "jsonlog"
	}
	return "general-log"
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func parseLog(ctx context.Context, p *capture.Parser, path string, read *atomic.Int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return p.Parse(ctx, bufio.NewReaderSize(countingReader{f, read}, 1<<20), path)
}

// progress prints the bytes read every 5 s until the returned stop.
func progress(w io.Writer, read *atomic.Int64, began time.Time) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(w, "obsbench: capture: %.0f MB read, %s\n", float64(read.Load())/1e6, time.Since(began).Round(time.Second))
			}
		}
	}()
	return func() { close(done); <-finished }
}

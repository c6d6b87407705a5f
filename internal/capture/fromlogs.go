package capture

// A capture is made from a server's statement logs, for --workload replay
// to replay: the logs are found, how they are written is learnt (a
// stderr log's prefix, the messages' language), and they are read with
// progress.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/workload"
)

// LogOptions say which logs obsbench capture reads, how, and what it
// records with the capture.
type LogOptions struct {
	Out    string   // the capture file to write
	Logs   []string // log files, or directories of them
	Source string   // a registered source's name (Sources), or auto
	Engine string   // the engine whose log it is, or "": implied by Source
	// Read says how the logs are written where they cannot say it.
	Read ReadOptions
	// Dataset, Tag, Scale and Workload are recorded for the replay.
	Dataset, Tag, Workload string
	Scale                  int
	// The filters on sessions.
	Filter Filter
}

// FromLogs turns statement logs into a capture file that --workload replay
// replays: a line of what it captured on stdout, progress and notes on
// stderr.
func FromLogs(ctx context.Context, o LogOptions, stdout, stderr io.Writer) error {
	h, err := o.header()
	if err != nil {
		return err
	}
	files, src, err := logFiles(o.Logs, o.Source, o.Engine)
	if err != nil {
		return err
	}
	opened, err := o.open(ctx, src, files)
	if err != nil {
		return err
	}
	h.Engine, h.Source, h.LogLinePrefix = src.Engine, src.Name, opened.LinePrefix
	f, err := createCapture(o.Out)
	if err != nil {
		return err
	}
	// The output's and the logs' own I/O errors are failures; any other
	// error is the logs' content, which is bad input.
	written := &errWriter{w: f}
	cw := NewWriter(written, h)
	p := ReadWith(opened.Reader, o.Filter, cw)
	in := &inputProgress{total: totalSize(files)}
	began := time.Now()
	stop := in.report(stderr, began, captureProgressEvery)
	var readErr error
	for _, path := range files {
		if err, readErr = parseLog(ctx, p, path, in); err != nil {
			break
		}
	}
	stop()
	if err == nil {
		err = cw.Close()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("--out %s: %w", o.Out, cerr)
	}
	st := p.Stats()
	if err == nil && st.Statements == 0 {
		hint := ""
		if h, ok := opened.Reader.(Hinter); ok {
			hint = h.NoStatementHint()
		}
		err = invalidf("no statements in %s: the server must log them (%s), and the filters must keep some sessions (%d log entries skipped)%s",
			strings.Join(files, ", "), howToLog(), st.Skipped, hint)
	}
	if err != nil {
		os.Remove(o.Out) // half a capture is no capture
		if ctx.Err() == nil && written.err == nil && readErr == nil {
			var ue InputError
			if !errors.As(err, &ue) {
				err = InputError{Err: err} // the log is not what it should be
			}
		}
		return err
	}
	secs := max(time.Since(began).Seconds(), 1e-3)
	read := float64(in.read.Load()) / 1e6
	fmt.Fprintf(stdout, "captured %d statements of %d sessions (%d connects, %d disconnects; %d log entries skipped) from %.1f MB of %s in %.1f s (%.0f MB/s): %s, %.1f MB\n",
		st.Statements, st.Sessions, st.Connects, st.Disconnects, st.Skipped, read, src.Name, secs, read/secs, o.Out, float64(written.n)/1e6)
	for _, n := range opened.Notes {
		fmt.Fprintf(stderr, "obsbench: capture: %s\n", n)
	}
	return nil
}

// createCapture creates the capture file, private, refusing to overwrite
// one.
func createCapture(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, invalidf("--out %s exists: obsbench does not overwrite a capture", path)
	}
	if err != nil {
		return nil, invalidf("--out: %v", err)
	}
	return f, nil
}

// header checks o's flags that need no log read and makes the capture's
// header from them.
func (o LogOptions) header() (Header, error) {
	h := Header{Dataset: o.Dataset, Tag: o.Tag, Workload: o.Workload}
	switch {
	case o.Out == "":
		return h, invalidf("capture needs --out FILE")
	case len(o.Logs) == 0:
		return h, invalidf("capture needs the log files (or directories of them) to read")
	case o.Source != "auto" && !known(o.Source):
		return h, invalidf("log source %q: want one of %s, or auto", o.Source, sourceList())
	case o.Read.LinePrefix != nil && o.Read.Server != "":
		return h, invalidf("--log-line-prefix and --dsn both say the log's prefix: give one")
	case o.Engine != "" && len(SourcesOf(o.Engine)) == 0:
		return h, invalidf("--engine %q: want %s (or none: the log's format implies it)", o.Engine, oneOf(slices.Sorted(slices.Values(Engines()))))
	case o.Engine != "" && o.Source != "auto" && engineOf(o.Source) != o.Engine:
		return h, invalidf("--engine %s and --source %s disagree: %s is a %s log", o.Engine, o.Source, o.Source, engineOf(o.Source))
	}
	if o.Workload != "" {
		m, err := workload.Lookup(o.Workload)
		if err != nil {
			return h, InputError{Err: err}
		}
		if h.Dataset == "" {
			h.Dataset = m.Dataset
		}
		if h.Tag == "" {
			h.Tag = m.Tag
		}
	}
	if o.Scale != 1 {
		if h.Dataset == "" {
			return h, invalidf("--scale %d needs --dataset or --workload: the scale is the dataset's", o.Scale)
		}
		if o.Scale > 100 {
			return h, invalidf("--scale %d: want 1 to 100", o.Scale)
		}
		if _, err := dataset.Scaled(h.Dataset, o.Scale); err != nil {
			return h, invalidf("--scale: %v", err)
		}
		h.Scale = o.Scale
	}
	return h, nil
}

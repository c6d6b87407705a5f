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
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// LogOptions say which logs obsbench capture reads, how, and what it
// records with the capture.
type LogOptions struct {
	Out    string   // the capture file to write
	Logs   []string // log files, or directories of them
	Source string   // csvlog, jsonlog, stderr, general-log or auto
	Engine string   // postgres or mariadb, or "": implied by Source
	// LogLinePrefix is a stderr log's log_line_prefix, if given (it may
	// be ""); PrefixDSN, if set, is a server to read it from instead.
	// With neither, a stderr log is read with DefaultPrefix.
	LogLinePrefix *string
	PrefixDSN     string
	// LogLanguage is the language of a PostgreSQL log's messages (the
	// server's lc_messages, or a message catalog's path); "" for
	// English, or the server's with PrefixDSN.
	LogLanguage string
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
	h.Engine, h.Source = engine.LogEngine(src), src
	settings, err := o.logSettings(ctx, src, files)
	if err != nil {
		return err
	}
	prefix, msgs, notes, err := o.howToRead(settings, src)
	if err != nil {
		return err
	}
	if prefix != nil {
		h.LogLinePrefix = prefix.String()
	}
	f, err := createCapture(o.Out)
	if err != nil {
		return err
	}
	// The output's and the logs' own I/O errors are failures; any other
	// error is the logs' content, which is bad input.
	written := &errWriter{w: f}
	cw := NewWriter(written, h)
	var p *Parser
	if prefix != nil {
		p = NewStderrParser(prefix, o.Filter, cw)
	} else if p, err = NewParser(src, o.Filter, cw); err != nil {
		f.Close()
		os.Remove(o.Out)
		return spec.InvalidError{Err: err}
	}
	p.SetMessages(msgs)
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
		err = spec.Invalidf("no statements in %s: the server must log them (PostgreSQL: log_statement=all or log_min_duration_statement=0; MariaDB: general_log=ON), and the filters must keep some sessions (%d log entries skipped)%s",
			strings.Join(files, ", "), st.Skipped, languageHint(msgs, p.Unrecognized()))
	}
	if err != nil {
		os.Remove(o.Out) // half a capture is no capture
		if ctx.Err() == nil && written.err == nil && readErr == nil {
			var ue spec.InvalidError
			if !errors.As(err, &ue) {
				err = spec.InvalidError{Err: err} // the log is not what it should be
			}
		}
		return err
	}
	secs := max(time.Since(began).Seconds(), 1e-3)
	read := float64(in.read.Load()) / 1e6
	fmt.Fprintf(stdout, "captured %d statements of %d sessions (%d connects, %d disconnects; %d log entries skipped) from %.1f MB of %s in %.1f s (%.0f MB/s): %s, %.1f MB\n",
		st.Statements, st.Sessions, st.Connects, st.Disconnects, st.Skipped, read, src, secs, read/secs, o.Out, float64(written.n)/1e6)
	for _, n := range notes {
		fmt.Fprintf(stderr, "obsbench: capture: %s\n", n)
	}
	return nil
}

// createCapture creates the capture file, private, refusing to overwrite
// one.
func createCapture(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, spec.Invalidf("--out %s exists: obsbench does not overwrite a capture", path)
	}
	if err != nil {
		return nil, spec.Invalidf("--out: %v", err)
	}
	return f, nil
}

// header checks o's flags that need no log read and makes the capture's
// header from them.
func (o LogOptions) header() (Header, error) {
	h := Header{Dataset: o.Dataset, Tag: o.Tag, Workload: o.Workload}
	switch {
	case o.Out == "":
		return h, spec.Invalidf("capture needs --out FILE")
	case len(o.Logs) == 0:
		return h, spec.Invalidf("capture needs the log files (or directories of them) to read")
	case o.Source != "auto" && !slices.Contains(Sources, o.Source):
		return h, spec.Invalidf("log source %q: want one of csvlog, jsonlog, stderr (PostgreSQL), general-log (MariaDB), or auto", o.Source)
	case o.LogLinePrefix != nil && o.PrefixDSN != "":
		return h, spec.Invalidf("--log-line-prefix and --dsn both say the log's prefix: give one")
	case o.Engine != "" && !engine.InfoOf(o.Engine).WritesLogs():
		return h, spec.Invalidf("--engine %q: want %s (or none: the log's format implies it)", o.Engine, spec.OneOf(engine.NamesWhere(engine.Info.WritesLogs)))
	case o.Engine != "" && o.Source != "auto" && engine.LogEngine(o.Source) != o.Engine:
		return h, spec.Invalidf("--engine %s and --source %s disagree: %s is a %s log", o.Engine, o.Source, o.Source, engine.LogEngine(o.Source))
	}
	if o.Workload != "" {
		m, err := workload.Lookup(o.Workload)
		if err != nil {
			return h, spec.InvalidError{Err: err}
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
			return h, spec.Invalidf("--scale %d needs --dataset or --workload: the scale is the dataset's", o.Scale)
		}
		if o.Scale > 100 {
			return h, spec.Invalidf("--scale %d: want 1 to 100", o.Scale)
		}
		if _, err := dataset.Scaled(h.Dataset, o.Scale); err != nil {
			return h, spec.Invalidf("--scale: %v", err)
		}
		h.Scale = o.Scale
	}
	return h, nil
}

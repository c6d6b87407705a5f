// Package logcapture turns a server's statement logs into a capture file
// (package capture's format) that --workload replay replays: it finds the
// logs, learns how they are written, and reads them with progress.
package logcapture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// Options say which logs obsbench capture reads, how, and what it
// records with the capture.
type Options struct {
	Out    string   // the capture file to write
	Logs   []string // log files, or directories of them
	Source string   // csvlog, jsonlog, stderr, general-log or auto
	Engine string   // postgres or mariadb, or "": implied by Source
	// LogLinePrefix is a stderr log's log_line_prefix, if given (it may
	// be ""); PrefixDSN, if set, is a server to read it from instead.
	// With neither, a stderr log is read with capture.DefaultPrefix.
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
	Filter capture.Filter
}

// Run turns statement logs into a capture file that --workload replay
// replays: a line of what it captured on stdout, progress and notes on
// stderr.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
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
	cw := capture.NewWriter(written, h)
	var p *capture.Parser
	if prefix != nil {
		p = capture.NewStderrParser(prefix, o.Filter, cw)
	} else if p, err = capture.NewParser(src, o.Filter, cw); err != nil {
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

// howToRead is how the logs are read: a stderr log's prefix (nil for
// other sources), the server's messages, and notes on both for the user.
func (o Options) howToRead(settings *postgres.LogSettings, src string) (prefix *capture.Prefix, msgs *capture.Messages, notes []string, err error) {
	if src == "stderr" {
		if prefix, notes, err = o.prefix(settings); err != nil {
			return nil, nil, nil, err
		}
	}
	msgs, note, err := o.messages(settings)
	if err != nil {
		return nil, nil, nil, err
	}
	if note != "" {
		notes = append(notes, note)
	}
	return prefix, msgs, notes, nil
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
func (o Options) header() (capture.Header, error) {
	h := capture.Header{Dataset: o.Dataset, Tag: o.Tag, Workload: o.Workload}
	switch {
	case o.Out == "":
		return h, spec.Invalidf("capture needs --out FILE")
	case len(o.Logs) == 0:
		return h, spec.Invalidf("capture needs the log files (or directories of them) to read")
	case o.Source != "auto" && !slices.Contains(capture.Sources, o.Source):
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

// logSettings reads the log settings of the server --dsn names, which say
// how its PostgreSQL log is read (nil without --dsn), after checking that
// the flags that say how a log is read fit the log's source.
func (o Options) logSettings(ctx context.Context, src string, files []string) (*postgres.LogSettings, error) {
	switch {
	case !capture.PostgreSQLLog(src) && (o.PrefixDSN != "" || o.LogLanguage != ""):
		return nil, spec.Invalidf("--dsn and --log-language say how a PostgreSQL log is read; %s is %s", strings.Join(files, ", "), src)
	case src != "stderr" && o.LogLinePrefix != nil:
		return nil, spec.Invalidf("--log-line-prefix says how PostgreSQL's stderr log is read; %s is %s", strings.Join(files, ", "), src)
	case o.PrefixDSN == "":
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := postgres.ReadLogSettings(ctx, o.PrefixDSN)
	if err != nil {
		return nil, fmt.Errorf("--dsn: reading the server's log settings: %w", err)
	}
	return &s, nil
}

// prefix is the log_line_prefix a stderr log is read with, and notes
// that say where it came from and what it cannot tell; s are the
// server's settings when --dsn was given.
func (o Options) prefix(s *postgres.LogSettings) (*capture.Prefix, []string, error) {
	var text, from string
	var notes []string
	switch {
	case o.LogLinePrefix != nil:
		text, from = *o.LogLinePrefix, "as given"
	case s != nil:
		text, from = s.LinePrefix, "the server's"
		if !strings.Contains(s.Destination, "stderr") {
			notes = append(notes, fmt.Sprintf("the server's log_destination is %q, without stderr: its log_line_prefix is these logs' only if it has not changed since they were written", s.Destination))
		}
	default:
		text, from = capture.DefaultPrefix, "Debian's default, which also reads PostgreSQL's '%m [%p] ' (give --log-line-prefix or --dsn if the server has another)"
	}
	p, err := capture.ParsePrefix(text)
	if err != nil {
		return nil, nil, spec.InvalidError{Err: err}
	}
	notes = append([]string{fmt.Sprintf("the stderr log was read with log_line_prefix '%s', %s", text, from)}, notes...)
	for _, l := range p.Limits() {
		notes = append(notes, "log_line_prefix: "+l)
	}
	return p, notes, nil
}

// messages are the translations a PostgreSQL log is read with: those of
// --log-language, or of the server's lc_messages (--dsn); nil for
// English. The note says which catalog was used.
func (o Options) messages(s *postgres.LogSettings) (*capture.Messages, string, error) {
	lang, from := o.LogLanguage, "--log-language"
	if lang == "" && s != nil {
		lang, from = s.Messages, "the server's lc_messages"
	}
	if english(lang) {
		return nil, "", nil
	}
	m, err := capture.LoadMessages(lang, capture.CatalogDirs)
	if err != nil {
		return nil, "", spec.Invalidf("%s %q: %v", from, lang, err)
	}
	note := fmt.Sprintf("the log's messages were read as %s (%s), with the translations of %s", lang, from, m.Catalog)
	if !m.ReadsConnections() {
		note += "; PostgreSQL writes this language's connection messages transliterated to ASCII (before a session has its database's encoding), which cannot be read back: sessions begin at their first statement, with the user and database of its log line, and the capture has no connect records"
	}
	return m, note, nil
}

// english says whether lc_messages lang is PostgreSQL's English
// (untranslated) messages.
func english(lang string) bool {
	l := strings.ToLower(lang)
	return l == "" || l == "c" || l == "posix" || strings.HasPrefix(l, "c.") || l == "en" || strings.HasPrefix(l, "en_") || strings.HasPrefix(l, "en.")
}

// languageHint says, for a capture that found no statement, whether the
// log's messages look like another language's.
func languageHint(m *capture.Messages, unknown []string) string {
	if m != nil || len(unknown) == 0 {
		return ""
	}
	if langs := capture.GuessLanguages(unknown, capture.CatalogDirs); len(langs) > 0 {
		return fmt.Sprintf("; its messages look like %s (the server's lc_messages is not English): give --log-language %s, or --dsn",
			strings.Join(langs, " or "), langs[0])
	}
	return fmt.Sprintf("; messages such as %q were not recognized: if the server's lc_messages is not English, give --log-language", unknown[0])
}

// captureProgressEvery is how often a long capture reports its progress.
var captureProgressEvery = 5 * time.Second

// extensions are the file names each source's logs have in a directory.
var extensions = map[string]string{"csvlog": ".csv", "jsonlog": ".json", "stderr": ".log", "general-log": ".log"}

// logFiles expands directories into their log files, sorted by name
// (PostgreSQL's rotated file names sort by time), and settles the source:
// the one given, or the one every file is, by its extension or first
// line. A directory gives the files of its source: PostgreSQL's csvlog
// directory also holds the stderr log's *.log files, which are read only
// where there is no csvlog or jsonlog.
func logFiles(args []string, source, eng string) ([]string, string, error) {
	var files []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return nil, "", spec.Invalidf("log %s: %v", a, pathError(err))
		}
		if !info.IsDir() {
			files = append(files, a)
			continue
		}
		in := map[string][]string{}
		for src, ext := range extensions {
			m, _ := filepath.Glob(filepath.Join(a, "*"+ext))
			if len(m) > 0 && (source == "auto" || source == src) && (eng == "" || eng == engine.LogEngine(src)) {
				sort.Strings(m)
				in[src] = m
			}
		}
		csvs, jsons, logs := in["csvlog"], in["jsonlog"], in["general-log"]
		if len(logs) == 0 {
			logs = in["stderr"]
		}
		switch {
		case len(csvs) > 0 && len(jsons) > 0:
			return nil, "", spec.Invalidf("log directory %s holds csvlog (*.csv) and jsonlog (*.json) files: give --source csvlog or --source jsonlog", a)
		case len(csvs) > 0:
			files = append(files, csvs...)
		case len(jsons) > 0:
			files = append(files, jsons...)
		case len(logs) > 0:
			files = append(files, logs...)
		default:
			want := "*.csv, *.json or *.log"
			if source != "auto" {
				want = "*" + extensions[source]
			} else if eng != "" {
				var exts []string
				for _, src := range engine.InfoOf(eng).LogSources {
					if e := "*" + extensions[src]; !slices.Contains(exts, e) {
						exts = append(exts, e)
					}
				}
				want = spec.OneOf(exts)
			}
			return nil, "", spec.Invalidf("log directory %s has no %s files", a, want)
		}
	}
	if source != "auto" {
		return files, source, nil
	}
	var first string
	for _, f := range files {
		s, err := sourceOf(f)
		if err != nil {
			return nil, "", err
		}
		switch {
		case s == "":
			// empty: any source
		case eng != "" && engine.LogEngine(s) != eng:
			return nil, "", spec.Invalidf("%s is a %s log (%s), not %s's: give the logs of one eng", f, engine.LogEngine(s), s, eng)
		case source == "auto":
			source, first = s, f
		case s != source:
			return nil, "", spec.Invalidf("%s is %s, %s is %s: give logs of one format, or --source", first, source, f, s)
		}
	}
	if source == "auto" { // every file is empty: any source of the eng
		source = capture.Sources[0]
		if eng != "" {
			source = engine.InfoOf(eng).LogSources[0]
		}
	}
	return files, source, nil
}

// sourceOf is a log's format by its extension, else its first line; ""
// for an empty file.
func sourceOf(path string) (string, error) {
	switch filepath.Ext(path) {
	case ".csv":
		return "csvlog", nil
	case ".json":
		return "jsonlog", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", spec.Invalidf("log %s: %v", path, pathError(err))
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if len(line) == 0 && (err == nil || errors.Is(err, io.EOF)) {
		return "", nil
	}
	if s := capture.Sniff(line); s != "" {
		return s, nil
	}
	first := string(line)
	if len(first) > 60 {
		first = first[:57] + "..."
	}
	return "", spec.Invalidf("%s:1: %q is not a log obsbench reads: want PostgreSQL csvlog (*.csv), jsonlog (*.json) or stderr log (lines with \"LOG:  \" after the log_line_prefix), or a MariaDB general log",
		path, strings.TrimRight(first, "\n"))
}

// pathError is err without the operation and path that an error message
// names already.
func pathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func totalSize(files []string) int64 {
	var n int64
	for _, f := range files {
		if info, err := os.Stat(f); err == nil {
			n += info.Size()
		}
	}
	return n
}

// parseLog captures one file; readErr is its own read error, if any.
func parseLog(ctx context.Context, p *capture.Parser, path string, in *inputProgress) (err, readErr error) {
	f, err := os.Open(path)
	if err != nil {
		return err, err
	}
	defer f.Close()
	in.file.Store(&path)
	r := &countingReader{r: f, n: &in.read}
	err = p.Parse(ctx, r, path)
	return err, r.err
}

// inputProgress is how far a capture has read.
type inputProgress struct {
	total int64
	read  atomic.Int64
	file  atomic.Pointer[string]
}

// report prints the progress every interval until the returned stop.
func (in *inputProgress) report(w io.Writer, began time.Time, every time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read, secs := in.read.Load(), time.Since(began).Seconds()
				var file string
				if f := in.file.Load(); f != nil {
					file = *f
				}
				fmt.Fprintf(w, "obsbench: capture: %.0f of %.0f MB read (%.0f%%), %.0f MB/s, %s elapsed, in %s\n",
					float64(read)/1e6, float64(in.total)/1e6, 100*float64(read)/float64(max(in.total, 1)), float64(read)/1e6/secs,
					time.Since(began).Round(time.Second), file)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// countingReader counts the bytes read through it and keeps its error.
type countingReader struct {
	r   io.Reader
	n   *atomic.Int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	if err != nil && !errors.Is(err, io.EOF) && c.err == nil {
		c.err = err
	}
	return n, err
}

// errWriter counts the bytes written through it and keeps its error.
type errWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	e.n += int64(n)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

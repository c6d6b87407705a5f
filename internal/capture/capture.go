// Package capture turns a server's statement log into a portable workload
// file, and reads such files back. A capture is gzip-compressed JSON
// lines: a header (format, version, engine, source), one record per
// connect, statement or disconnect of each session in the order the server
// logged them, and a trailer with the totals. Both directions stream: a
// log of many gigabytes is never held in memory.
//
// FromLogs is obsbench capture: it finds the logs, has their engine's
// reader (a registered Source) learn how they are written, and reads them
// into a capture with progress. A Script replays a capture as a workload
// (--workload replay).
package capture

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
	"unicode/utf8"
)

// Format names the file format in every header; Version is the version
// this package writes and the newest it reads.
const (
	Format  = "obsbench-capture"
	Version = 1
)

// ErrTruncated is a capture without its trailer: the file was cut short.
var ErrTruncated = errors.New("capture is truncated (no trailer): the file was cut short")

// Header is a capture's first line.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Engine  string `json:"engine"` // postgres, mariadb
	Source  string `json:"source"` // csvlog, jsonlog, stderr, general-log
	// LogLinePrefix is the log_line_prefix a stderr log was read with.
	LogLinePrefix string `json:"log_line_prefix,omitempty"`
	// Dataset is the obsbench dataset the workload ran on, if known: a
	// replay on a managed server loads it first.
	Dataset string `json:"dataset,omitempty"`
	// Scale is the dataset's scale (0: 1).
	Scale int `json:"scale,omitempty"`
	// Workload is the obsbench workload captured, if it was one: a replay
	// runs its set-up (functions its statements call) after the dataset.
	Workload string `json:"workload,omitempty"`
	// Tag is a string in every statement of the captured workload, if it
	// has one: observers' records of the replay are counted by it.
	Tag     string    `json:"tag,omitempty"`
	Created time.Time `json:"created"`
	// Start is the time of the first record; records' offsets count from
	// it.
	Start time.Time `json:"start"`
}

// Kind is what a record is.
type Kind string

const (
	Connect    Kind = "connect"
	Statement  Kind = "stmt"
	Disconnect Kind = "disconnect"
)

// Record is one event of one session.
type Record struct {
	Session string `json:"s"`
	// Offset is the time since Header.Start, in microseconds.
	Offset int64  `json:"t"`
	Kind   Kind   `json:"k"`
	SQL    string `json:"q,omitempty"`
	// Params are a statement's parameters as text; nil is SQL NULL.
	Params   []*string `json:"p,omitempty"`
	User     string    `json:"u,omitempty"`
	Database string    `json:"d,omitempty"`
}

// Trailer is a capture's last line.
type Trailer struct {
	End        bool  `json:"end"`
	Records    int64 `json:"records"`
	Statements int64 `json:"statements"`
	Sessions   int64 `json:"sessions"`
}

// Writer writes a capture. It holds one map entry per session that has
// records and no disconnect yet, never the records: a session's
// disconnect ends it, and its key must not come back after that.
type Writer struct {
	h       Header
	gz      *gzip.Writer
	buf     *bufio.Writer
	line    []byte // a record's encoding, reused
	started bool
	closed  bool
	trailer Trailer
	open    map[string]struct{} // sessions with records and no disconnect
	err     error
}

// NewWriter starts a capture on w. The header is written with the first
// record, whose time becomes the capture's start.
func NewWriter(w io.Writer, h Header) *Writer {
	h.Format, h.Version = Format, Version
	if h.Created.IsZero() {
		h.Created = time.Now().UTC().Truncate(time.Second)
	}
	// BestSpeed: compression is the capture's largest cost after the
	// log's parsing, and the default level is much slower on capture
	// lines for a file not much smaller.
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	return &Writer{h: h, gz: gz, buf: bufio.NewWriterSize(gz, 256<<10), open: map[string]struct{}{}}
}

// errClosed is a Write after Close.
var errClosed = errors.New("capture: write after Close")

// Write adds rec, which happened at at; rec.Offset is set from at.
func (w *Writer) Write(rec Record, at time.Time) error {
	if w.err != nil {
		return w.err
	}
	if !w.started {
		w.started = true
		w.h.Start = at
		if w.err = w.writeJSON(w.h); w.err != nil {
			return w.err
		}
	}
	rec.Offset = at.Sub(w.h.Start).Microseconds()
	w.trailer.Records++
	if rec.Kind == Statement {
		w.trailer.Statements++
	}
	if _, ok := w.open[rec.Session]; !ok {
		w.open[rec.Session] = struct{}{}
		w.trailer.Sessions++
	}
	if rec.Kind == Disconnect {
		delete(w.open, rec.Session)
	}
	w.line = appendRecord(w.line[:0], &rec)
	_, w.err = w.buf.Write(w.line)
	return w.err
}

func (w *Writer) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.buf.Write(append(b, '\n'))
	return err
}

// Close writes the trailer and ends the compressed stream; it does not
// close the underlying writer. A capture without records has a header
// (its start is its creation) and a trailer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	defer func() {
		if w.err == nil {
			w.err = errClosed
		}
	}()
	if !w.started {
		w.started = true
		w.h.Start = w.h.Created
		if w.err = w.writeJSON(w.h); w.err != nil {
			return w.err
		}
	}
	w.trailer.End = true
	if w.err = w.writeJSON(w.trailer); w.err != nil {
		return w.err
	}
	if w.err = w.buf.Flush(); w.err != nil {
		return w.err
	}
	if w.err = w.gz.Close(); w.err != nil {
		return w.err
	}
	return nil
}

// Totals are the counts written so far.
func (w *Writer) Totals() Trailer { return w.trailer }

// Reader reads a capture record by record.
type Reader struct {
	h       Header
	dec     *json.Decoder
	trailer Trailer
	line    int64 // of the latest value read
	records int64
	done    bool
}

// NewReader reads and checks the header of the capture on r.
func NewReader(r io.Reader) (*Reader, error) {
	gz, err := gzip.NewReader(bufio.NewReaderSize(r, 256<<10))
	if err != nil {
		return nil, fmt.Errorf("not a capture (not gzip-compressed): %w", err)
	}
	rd := &Reader{dec: json.NewDecoder(gz), line: 1}
	if err := rd.dec.Decode(&rd.h); err != nil {
		return nil, fmt.Errorf("not a capture (line 1 is no header): %w", err)
	}
	switch {
	case rd.h.Format != Format:
		return nil, fmt.Errorf("not a capture: format %q, want %q", rd.h.Format, Format)
	case rd.h.Version < 1 || rd.h.Version > Version:
		return nil, fmt.Errorf("capture version %d: this obsbench reads versions 1 to %d", rd.h.Version, Version)
	}
	return rd, nil
}

// Open opens the capture file at path; close the returned Closer.
func Open(path string) (*Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, f, nil
}

// Header is the capture's header.
func (r *Reader) Header() Header { return r.h }

// Next returns the next record, io.EOF after the last, or an error
// wrapping ErrTruncated when the file ends without its trailer.
func (r *Reader) Next() (Record, error) {
	if r.done {
		return Record{}, io.EOF
	}
	var raw struct {
		Record
		End        bool  `json:"end"`
		Records    int64 `json:"records"`
		Statements int64 `json:"statements"`
		Sessions   int64 `json:"sessions"`
	}
	r.line++
	if err := r.dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Record{}, fmt.Errorf("capture line %d: %w", r.line, ErrTruncated)
		}
		return Record{}, fmt.Errorf("capture line %d: %w", r.line, err)
	}
	if raw.End {
		r.done = true
		r.trailer = Trailer{End: true, Records: raw.Records, Statements: raw.Statements, Sessions: raw.Sessions}
		if raw.Records != r.records {
			return Record{}, fmt.Errorf("capture line %d: the trailer counts %d records, the file holds %d: the capture is damaged", r.line, raw.Records, r.records)
		}
		return Record{}, io.EOF
	}
	r.records++
	return raw.Record, nil
}

// Trailer is the capture's totals, once Next has returned io.EOF.
func (r *Reader) Trailer() Trailer { return r.trailer }

// appendRecord appends rec as one line of JSON: what encoding/json would
// write for it, without its reflection, which is a third of a capture's
// time.
func appendRecord(b []byte, rec *Record) []byte {
	b = append(b, `{"s":`...)
	b = appendString(b, rec.Session)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, rec.Offset, 10)
	b = append(b, `,"k":`...)
	b = appendString(b, string(rec.Kind))
	if rec.SQL != "" {
		b = append(b, `,"q":`...)
		b = appendString(b, rec.SQL)
	}
	if len(rec.Params) > 0 {
		b = append(b, `,"p":[`...)
		for i, p := range rec.Params {
			if i > 0 {
				b = append(b, ',')
			}
			if p == nil {
				b = append(b, "null"...)
			} else {
				b = appendString(b, *p)
			}
		}
		b = append(b, ']')
	}
	if rec.User != "" {
		b = append(b, `,"u":`...)
		b = appendString(b, rec.User)
	}
	if rec.Database != "" {
		b = append(b, `,"d":`...)
		b = appendString(b, rec.Database)
	}
	return append(b, "}\n"...)
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD (as encoding/json
// does), everything else as it is.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but end lines in JavaScript.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Package capture turns a server's statement log into a portable workload
// file, and reads such files back. A capture is gzip-compressed JSON
// lines: a header (format, version, engine, source), one record per
// connect, statement or disconnect of each session in the order the server
// logged them, and a trailer with the totals. Both directions stream: a
// log of many gigabytes is never held in memory.
package capture

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
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
	Source  string `json:"source"` // csvlog, jsonlog, general-log
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

// Writer writes a capture.
type Writer struct {
	h        Header
	gz       *gzip.Writer
	buf      *bufio.Writer
	enc      *json.Encoder
	started  bool
	trailer  Trailer
	sessions map[string]bool
	err      error
}

// NewWriter starts a capture on w. The header is written with the first
// record, whose time becomes the capture's start.
func NewWriter(w io.Writer, h Header) *Writer {
	h.Format, h.Version = Format, Version
	if h.Created.IsZero() {
		h.Created = time.Now().UTC()
	}
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // a capture is written once, read rarely
	buf := bufio.NewWriterSize(gz, 256<<10)
	return &Writer{h: h, gz: gz, buf: buf, enc: json.NewEncoder(buf), sessions: map[string]bool{}}
}

// Write adds rec, which happened at at.
func (w *Writer) Write(rec Record, at time.Time) error {
	if w.err != nil {
		return w.err
	}
	if !w.started {
		w.started = true
		w.h.Start = at
		if w.err = w.enc.Encode(w.h); w.err != nil {
			return w.err
		}
	}
	rec.Offset = at.Sub(w.h.Start).Microseconds()
	w.trailer.Records++
	if rec.Kind == Statement {
		w.trailer.Statements++
	}
	if !w.sessions[rec.Session] {
		w.sessions[rec.Session] = true
		w.trailer.Sessions++
	}
	w.err = w.enc.Encode(rec)
	return w.err
}

// Close writes the trailer and ends the compressed stream; it does not
// close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if !w.started {
		w.h.Start = w.h.Created
		if err := w.enc.Encode(w.h); err != nil {
			return err
		}
	}
	w.trailer.End = true
	if err := w.enc.Encode(w.trailer); err != nil {
		return err
	}
	if err := w.buf.Flush(); err != nil {
		return err
	}
	return w.gz.Close()
}

// Totals are the counts written so far.
func (w *Writer) Totals() Trailer { return w.trailer }

// Reader reads a capture record by record.
type Reader struct {
	h       Header
	dec     *json.Decoder
	trailer Trailer
	line    int64
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
			return Record{}, fmt.Errorf("line %d: %w", r.line, ErrTruncated)
		}
		return Record{}, fmt.Errorf("capture line %d: %w", r.line, err)
	}
	if raw.End {
		r.done = true
		r.trailer = Trailer{End: true, Records: raw.Records, Statements: raw.Statements, Sessions: raw.Sessions}
		return Record{}, io.EOF
	}
	return raw.Record, nil
}

// Trailer is the capture's totals, once Next has returned io.EOF.
func (r *Reader) Trailer() Trailer { return r.trailer }

// Package journal records, durably and before they are made, the changes
// obsbench makes to a server it does not manage, so that they can be undone
// after obsbench was killed: `obsbench restore` replays a journal backwards.
//
// A journal is a JSON-lines file: a header naming the server (its DSN with
// the password removed), then one line per change, written and fsynced
// before the change is made, and one line per change undone. A journal
// whose changes are all undone is removed; a file that remains lists what
// still needs undoing.
package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Entry is one line of a journal.
type Entry struct {
	Seq  int       `json:"seq"`
	Time time.Time `json:"time"`
	// Kind is "begin" (the header), "change" or "undone".
	Kind string `json:"kind"`
	// Server (begin) is the server's DSN without its password; PID is the
	// obsbench process that wrote the journal.
	Server string `json:"server,omitempty"`
	PID    int    `json:"pid,omitempty"`
	// Change (change) is the engine's description of one change and how
	// to undo it; the journal does not interpret it.
	Change json.RawMessage `json:"change,omitempty"`
	// Undoes (undone) is the Seq of the change undone.
	Undoes int `json:"undoes,omitempty"`
}

// Journal is an open journal file.
type Journal struct {
	mu      sync.Mutex
	path    string
	f       *os.File
	seq     int
	pending map[int]bool
}

// Dir is where journals live unless told otherwise, in the environment
// getenv reads: $OBSBENCH_STATE_DIR, else $XDG_STATE_HOME/obsbench, else
// ~/.local/state/obsbench.
func Dir(getenv func(string) string) string {
	if d := getenv("OBSBENCH_STATE_DIR"); d != "" {
		return d
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "obsbench")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "obsbench-state")
	}
	return filepath.Join(home, ".local", "state", "obsbench")
}

// Create starts a new journal in dir for server (a DSN already stripped of
// its password).
func Create(dir, server string) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create journal directory: %w", err)
	}
	name := fmt.Sprintf("journal-%s-%d.jsonl", time.Now().UTC().Format("20060102T150405.000000000"), os.Getpid())
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create journal: %w", err)
	}
	j := &Journal{path: path, f: f, pending: map[int]bool{}}
	if err := j.append(Entry{Kind: "begin", Server: server, PID: os.Getpid()}); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	// The directory entry must survive a crash too.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return j, nil
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

func (j *Journal) append(e Entry) error {
	j.seq++
	e.Seq, e.Time = j.seq, time.Now().UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync journal %s: %w", j.path, err)
	}
	return nil
}

// Record writes change durably and returns its number, to be passed to
// Undone once the change is undone. Call it before making the change.
func (j *Journal) Record(change any) (int, error) {
	raw, err := json.Marshal(change)
	if err != nil {
		return 0, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.append(Entry{Kind: "change", Change: raw}); err != nil {
		return 0, err
	}
	j.pending[j.seq] = true
	return j.seq, nil
}

// Undone records that change seq was undone.
func (j *Journal) Undone(seq int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.append(Entry{Kind: "undone", Undoes: seq}); err != nil {
		return err
	}
	delete(j.pending, seq)
	return nil
}

// Pending is the number of changes not yet undone.
func (j *Journal) Pending() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.pending)
}

// Close closes the journal and removes it when nothing is left to undo;
// otherwise it stays for `obsbench restore`, and Close says so.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.f.Close(); err != nil {
		return err
	}
	if len(j.pending) > 0 {
		return &PendingError{Path: j.path, Changes: len(j.pending)}
	}
	return os.Remove(j.path)
}

// PendingError says a journal still holds changes that were not undone.
type PendingError struct {
	Path    string
	Changes int
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("%d change(s) to the server were not undone; they are in %s: run `obsbench restore --journal %s`", e.Changes, e.Path, e.Path)
}

// Read returns a journal's header and the changes not undone, oldest
// first. A last line cut short by a crash is ignored: the change it
// announced was not made, since each change is recorded before it is made.
func Read(path string) (header Entry, pending []Entry, err error) {
	entries, _, err := readEntries(path)
	if err != nil {
		return header, nil, err
	}
	return split(path, entries)
}

// split finds the header and the changes not undone among entries.
func split(path string, entries []Entry) (header Entry, pending []Entry, err error) {
	undone := map[int]bool{}
	for _, e := range entries {
		if e.Kind == "undone" {
			undone[e.Undoes] = true
		}
	}
	for _, e := range entries {
		switch {
		case e.Kind == "begin":
			header = e
		case e.Kind == "change" && !undone[e.Seq]:
			pending = append(pending, e)
		}
	}
	if header.Kind != "begin" {
		return header, nil, fmt.Errorf("%s: not an obsbench journal (no header line)", path)
	}
	return header, pending, nil
}

// readEntries parses a journal; whole is the length of its complete lines
// (less than the file's when the last line is torn).
func readEntries(path string) (entries []Entry, whole int64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	whole = int64(bytes.LastIndexByte(b, '\n') + 1)
	lines := bytes.Split(b, []byte("\n"))
	for i, line := range lines {
		if len(line) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			if i == len(lines)-1 {
				break // no newline after it: the torn last line of a crash
			}
			return nil, 0, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		switch e.Kind {
		case "begin", "change", "undone":
		default:
			return nil, 0, fmt.Errorf("%s:%d: unknown entry kind %q", path, i+1, e.Kind)
		}
		entries = append(entries, e)
	}
	return entries, whole, nil
}

// MarkUndone records, after a restore, that changes seqs were undone, and
// removes the journal when nothing is left to undo.
func MarkUndone(path string, seqs []int) error {
	entries, whole, err := readEntries(path)
	if err != nil {
		return err
	}
	_, pending, err := split(path, entries)
	if err != nil {
		return err
	}
	left := map[int]bool{}
	for _, p := range pending {
		left[p.Seq] = true
	}
	for _, s := range seqs {
		delete(left, s)
	}
	if len(left) == 0 {
		return os.Remove(path)
	}
	last := 0
	for _, e := range entries {
		last = max(last, e.Seq)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	// A torn last line (a crash while it was written) is cut off first,
	// or the next line would be glued to it.
	if err := f.Truncate(whole); err != nil {
		return err
	}
	for i, s := range seqs {
		b, _ := json.Marshal(Entry{Seq: last + 1 + i, Time: time.Now().UTC(), Kind: "undone", Undoes: s})
		if _, err := f.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return f.Sync()
}

// List returns the journals in dir, oldest first.
func List(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, "journal-*.jsonl"))
}

// WriterAlive reports whether the process that wrote the journal with
// header h still runs.
func WriterAlive(h Entry) bool {
	if h.PID <= 0 || h.PID == os.Getpid() {
		return false
	}
	_, err := os.Stat("/proc/" + strconv.Itoa(h.PID))
	return err == nil
}

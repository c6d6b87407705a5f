// A capture replayed as a workload: each driver session replays one captured session's
// statements in their captured order, either as fast as the server answers
// (stress: think and connect time dropped, as pgreplay's and the studies'
// stress mode) or at the captured times scaled by a speed factor
// (synchronized). A statement the server refuses is counted and sampled,
// not fatal: a captured workload may hold errors of its own.
package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/obsbench/obsbench/internal/workload"
)

// ReplayMode is how a replay paces its statements.
type ReplayMode string

const (
	// Stress sends each session's next statement as soon as the previous
	// one is answered.
	Stress ReplayMode = "stress"
	// Sync sends each statement at its captured time, divided by Speed.
	Sync ReplayMode = "sync"
)

// ReplayOptions say how to replay.
type ReplayOptions struct {
	Mode ReplayMode
	// Speed divides the captured times in Sync mode (2 replays twice as
	// fast); ignored in Stress mode.
	Speed float64
	// Passes is how many times each session replays its statements before
	// it is done; 0 replays them again and again until the run ends.
	Passes int
}

// Check says what is wrong with o, if anything.
func (o ReplayOptions) Check() error {
	switch o.Mode {
	case Stress:
	case Sync:
		if !(o.Speed > 0 && o.Speed <= 1000) {
			return fmt.Errorf("replay speed %v: want a factor above 0, at most 1000 (1 keeps the captured timing)", o.Speed)
		}
	default:
		return fmt.Errorf("replay mode %q: want stress or sync", o.Mode)
	}
	if o.Passes < 0 {
		return fmt.Errorf("replay passes %d: want 0 (repeat until the run ends) or more", o.Passes)
	}
	return nil
}

// Step is one captured statement.
type Step struct {
	// At is the statement's captured time since the capture's start.
	At     time.Duration
	SQL    string
	Params []any // string or nil (NULL); nil when the statement has none
}

// Session is one captured session's statements, in captured order.
type Session struct {
	ID    string
	Steps []Step
}

// Script is a whole capture, loaded for replay.
type Script struct {
	Header   Header
	Sessions []Session // in order of their first statement
	// Statements counts the steps of all sessions.
	Statements int64
	// Span is the captured time from the start to the last statement.
	Span time.Duration
}

// LoadScript reads a capture file. Statement texts are shared between steps, so
// a capture of many repetitions of few statements stays small in memory.
func LoadScript(path string) (*Script, error) {
	r, c, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	s, err := ReadScript(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseScript loads a script from a capture file's contents; name is the
// file's, for errors.
func ParseScript(name string, b []byte) (*Script, error) {
	r, err := NewReader(bytes.NewReader(b))
	if err == nil {
		var s *Script
		if s, err = ReadScript(r); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", name, err)
}

// ReadScript loads a script from a capture reader.
func ReadScript(r *Reader) (*Script, error) {
	s := &Script{Header: r.Header()}
	index := map[string]int{}
	texts := map[string]string{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if rec.Kind != Statement {
			continue // connection time is not replayed
		}
		i, ok := index[rec.Session]
		if !ok {
			i = len(s.Sessions)
			index[rec.Session] = i
			s.Sessions = append(s.Sessions, Session{ID: rec.Session})
		}
		text, ok := texts[rec.SQL]
		if !ok {
			text = strings.Clone(rec.SQL)
			texts[text] = text
		}
		step := Step{At: time.Duration(rec.Offset) * time.Microsecond, SQL: text}
		if rec.Params != nil {
			step.Params = make([]any, len(rec.Params))
			for k, p := range rec.Params {
				if p != nil {
					step.Params[k] = *p
				}
			}
		}
		s.Sessions[i].Steps = append(s.Sessions[i].Steps, step)
		s.Statements++
		s.Span = max(s.Span, step.At)
	}
	if s.Statements == 0 {
		return nil, errors.New("the capture holds no statements")
	}
	return s, nil
}

// Meta is the script as a workload of the registry's kind: its dataset is
// the one the capture was made on ("none" when unknown: the server has the
// data), and one driver session per captured session by default.
func (s *Script) Meta(o ReplayOptions) workload.Meta {
	ds := s.Header.Dataset
	if ds == "" {
		ds = "none"
	}
	m := workload.Meta{
		Name:           "replay",
		Description:    fmt.Sprintf("replay of a %s capture (%d sessions, %d statements), %s mode", s.Header.Source, len(s.Sessions), s.Statements, o.Mode),
		Dataset:        ds,
		DatasetScale:   s.Header.Scale,
		Tag:            s.Header.Tag,
		DefaultClients: len(s.Sessions),
		New:            func() workload.Workload { return &replayer{script: s, opts: o} },
	}
	if captured, err := workload.Lookup(s.Header.Workload); err == nil {
		m.Setup, m.DialectSetup = captured.Setup, captured.DialectSetup
	}
	return m
}

// replayer is one run's replay: its sessions share the start of the
// captured timeline.
type replayer struct {
	script *Script
	opts   ReplayOptions
	once   sync.Once
	start  time.Time
}

// maxConsecutiveErrors ends a session whose statements all fail: its
// connection is gone, or the server is not the one captured.
const maxConsecutiveErrors = 1000

// Worker replays captured session number session modulo the number of
// captured sessions (more driver sessions than captured ones replay some
// twice, fewer leave some out).
func (w *replayer) Worker(ctx context.Context, conn workload.Conn, session int) (workload.Op, error) {
	sess := w.script.Sessions[session%len(w.script.Sessions)]
	exec, _ := conn.(workload.Execer)
	prepared := map[string]workload.Stmt{}
	// period is the captured timeline's length: pass k of a session in
	// Sync mode is shifted by k periods.
	period := w.script.Span + time.Millisecond
	i, pass, failing := 0, 0, 0
	return func(ctx context.Context) error {
		if i == len(sess.Steps) {
			i, pass = 0, pass+1
		}
		if w.opts.Passes > 0 && pass >= w.opts.Passes {
			return workload.ErrDone
		}
		st := sess.Steps[i]
		i++
		if w.opts.Mode == Sync {
			w.once.Do(func() { w.start = time.Now() })
			due := w.start.Add(time.Duration(float64(st.At+time.Duration(pass)*period) / w.opts.Speed))
			if err := workload.Sleep(ctx, due); err != nil {
				return err
			}
			workload.Started(ctx)
		}
		err := w.exec(ctx, conn, exec, prepared, st)
		if err == nil || ctx.Err() != nil {
			failing = 0
			return err
		}
		if failing++; failing >= maxConsecutiveErrors {
			return fmt.Errorf("captured session %s: %d statements in a row failed, the last: %w", sess.ID, failing, err)
		}
		return &workload.StatementError{Err: fmt.Errorf("%w (in: %s)", err, abbreviateSQL(st.SQL))}
	}, nil
}

// exec runs a step: with parameters as a statement prepared once per
// session, without as text when the session can (the captured text may
// hold several statements, or statements that cannot be prepared).
func (w *replayer) exec(ctx context.Context, conn workload.Conn, exec workload.Execer, prepared map[string]workload.Stmt, st Step) error {
	if st.Params == nil && exec != nil {
		return exec.ExecSQL(ctx, st.SQL)
	}
	stmt, ok := prepared[st.SQL]
	if !ok {
		var err error
		if stmt, err = conn.Prepare(ctx, st.SQL); err != nil {
			return err
		}
		prepared[st.SQL] = stmt
	}
	return stmt.Exec(ctx, st.Params...)
}

// abbreviate shortens a statement for an error sample.
func abbreviateSQL(sql string) string {
	sql = strings.Join(strings.Fields(sql), " ")
	if len(sql) > 80 {
		return sql[:77] + "..."
	}
	return sql
}

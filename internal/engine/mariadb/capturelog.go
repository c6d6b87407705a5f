package mariadb

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
)

// A MariaDB general log entry is
//
//	YYMMDD HH:MM:SS\t    ID Command\tArgument
//
// with the time (the hour space-padded, local time, whole seconds) only
// when the second changed, and "\t\t" in its place otherwise. An argument
// with newlines continues on the next lines as it is. The server writes
// three header lines whenever it opens the file (at start, at FLUSH LOGS,
// when general_log is switched on).

// generalLog is the state of a MariaDB general log across files: the
// log's reader (capture.LogReader).
type generalLog struct {
	now  time.Time                // the latest time printed
	open map[uint64]*mariaSession // each thread's current session
	// epochs are the thread ids that began a session, one set per server
	// lifetime: a thread id is not reused while the server runs, so a
	// session on an id already in the latest set means the server
	// restarted (its ids begin again) and starts a new set.
	epochs []idSet
	// opened counts the times the server opened the log (a header): at
	// a restart, the sessions from before the latest one are gone.
	opened  int
	pending *mariaEntry // the entry whose argument may continue
	// held are records behind a Connect that may yet be refused: the
	// server logs every login attempt as a Connect, and a refused one
	// is followed by a second Connect "Access denied for user ...".
	held []heldRecord
}

type mariaSession struct {
	key, user, db string
	keep          bool
	opened        int // generalLog.opened when it began
	// attempt: the session has only its Connect so far, which may yet
	// be refused; a kept session's Connect is held until then.
	attempt   bool
	connectAt time.Time
}

type mariaEntry struct {
	at      time.Time
	thread  uint64
	command string
	arg     strings.Builder
	line    int
}

type heldRecord struct {
	rec  capture.Record
	at   time.Time
	sess *mariaSession // a Connect's session, whose login may be refused yet
	line int
}

func newGeneralLog() *generalLog {
	return &generalLog{open: map[uint64]*mariaSession{}, epochs: []idSet{{}}}
}

func init() {
	capture.Register(capture.Source{
		Name: "general-log", Engine: "mariadb", Product: "MariaDB", Ext: ".log",
		Describe: "general log", HowToLog: "general_log=ON", Order: 20,
		Sniff: func(line string) bool {
			_, entry := splitGeneralEntry(line)
			return entry || isGeneralHeader(line)
		},
		Open: func(context.Context, capture.ReadOptions) (capture.Opened, error) {
			return capture.Opened{Reader: newGeneralLog()}, nil
		},
	})
}

// A login attempt is a login once its thread logs something else, or,
// failing that, once holdFor of log time has passed or holdMax records
// wait behind it: a refusal is logged right after its attempt.
const (
	holdFor = 2 * time.Second
	holdMax = 4096
)

// connectArg is a Connect's argument: "user@host on db using Socket", or
// "user@host as proxied on db using TCP/IP".
var connectArg = regexp.MustCompile(`^(\S*)@\S*(?: as \S*)? on (\S*) using `)

func (g *generalLog) Read(ctx context.Context, p *capture.Parser, r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), capture.MaxLine)
	line, entries, stray := 0, 0, 0
	for sc.Scan() {
		line++
		if err := p.Line(ctx); err != nil {
			return err
		}
		text := sc.Text()
		e, ok := splitGeneralEntry(text)
		if !ok {
			switch {
			case isGeneralHeader(text):
				// Entries are written whole: a header ends the one before.
				if err := g.flush(p, name); err != nil {
					return err
				}
				if strings.HasSuffix(text, " started with:") {
					g.opened++
				}
			case g.pending != nil:
				g.pending.arg.WriteByte('\n')
				g.pending.arg.WriteString(text)
			default:
				stray++ // the rest of an entry from before the file began
			}
			continue
		}
		if err := g.flush(p, name); err != nil {
			return err
		}
		entries++
		if e.stamp != "" {
			at, err := parseGeneralTime(e.stamp)
			if err != nil {
				return fmt.Errorf("%s:%d: %w", name, line, err)
			}
			g.now = at
		}
		pe := &mariaEntry{at: g.now, thread: e.thread, command: e.command, line: line}
		pe.arg.WriteString(e.arg)
		g.pending = pe
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, capture.LineError(err))
	}
	if err := g.flush(p, name); err != nil {
		return err
	}
	if entries == 0 && stray > 0 {
		return fmt.Errorf("%s:1: no MariaDB general log entry in %d lines: want lines like \"261122 10:00:00\\t     5 Query\\tSELECT 1\" (general_log=ON, log_output=FILE)", name, line)
	}
	// A login attempt at the very end of a file is taken as a login: its
	// refusal would be on the next line of the same file.
	return g.releaseHeld(p, name, true)
}

// generalEntry is an entry line's parts.
type generalEntry struct {
	stamp        string // "" when the line has no time
	thread       uint64
	command, arg string
}

// splitGeneralEntry reads a line that begins an entry.
func splitGeneralEntry(s string) (generalEntry, bool) {
	var e generalEntry
	switch {
	case strings.HasPrefix(s, "\t\t"):
		s = s[2:]
	case len(s) > 16 && s[15] == '\t' && isGeneralStamp(s[:15]):
		e.stamp, s = s[:15], s[16:]
	default:
		return e, false
	}
	s = strings.TrimLeft(s, " ") // the id is "%6llu "
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i == len(s) || s[i] != ' ' {
		return e, false
	}
	id, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil {
		return e, false
	}
	s = s[i+1:]
	tab := strings.IndexByte(s, '\t')
	if tab <= 0 || !isCommandName(s[:tab]) {
		return e, false
	}
	e.thread, e.command, e.arg = id, s[:tab], s[tab+1:]
	return e, true
}

// isGeneralStamp says whether s is "YYMMDD HH:MM:SS" (the hour may be
// space-padded).
func isGeneralStamp(s string) bool {
	return len(s) == 15 && digits(s[:6]) && s[6] == ' ' && (s[7] == ' ' || s[7] >= '0' && s[7] <= '9') &&
		digits(s[8:9]) && s[9] == ':' && digits(s[10:12]) && s[12] == ':' && digits(s[13:15])
}

// isCommandName says whether s could be a command's name ("Query", "Init
// DB", "Close stmt", "Bulk_execute"): names unknown here are entries
// still, and skipped, rather than glued to the statement before.
func isCommandName(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == ' ' || c == '_') {
			return false
		}
	}
	return true
}

// isGeneralHeader says whether line is one the server writes when it
// opens the log.
func isGeneralHeader(line string) bool {
	return line == "Time\t\t    Id Command\tArgument" ||
		strings.Contains(line, ", Version: ") && strings.HasSuffix(line, " started with:") ||
		strings.HasPrefix(line, "Tcp port: ") || strings.HasPrefix(line, "TCP Port: ")
}

// parseGeneralTime reads "261122 10:00:00" or "261122  9:00:00". The
// server writes its local time without a zone, read here as UTC: the
// records' offsets are right, and the capture's start is in the server's
// zone.
func parseGeneralTime(s string) (time.Time, error) {
	b := []byte(s)
	if b[7] == ' ' {
		b[7] = '0'
	}
	t, err := time.Parse("060102 15:04:05", string(b))
	if err != nil {
		return t, fmt.Errorf("time %q: want YYMMDD HH:MM:SS", s)
	}
	return t, nil
}

// flushGeneral turns the pending entry, now complete, into a record.
func (g *generalLog) flush(p *capture.Parser, name string) error {
	e := g.pending
	if e == nil {
		return nil
	}
	g.pending = nil
	arg := e.arg.String()
	sess := g.open[e.thread]
	denied := e.command == "Connect" && strings.HasPrefix(arg, "Access denied ")
	switch {
	case denied:
		// The attempt before was refused: it was no session.
		if sess != nil && sess.attempt {
			delete(g.open, e.thread)
			if sess.keep {
				p.Skip() // the attempt, held
			}
			sess.keep, sess.attempt = false, false
		}
		p.Skip()
		return g.releaseHeld(p, name, false)
	case e.command == "Connect" || sess == nil:
		sess = &mariaSession{key: g.sessionKey(e.thread), opened: g.opened}
		if m := connectArg.FindStringSubmatch(arg); e.command == "Connect" && m != nil {
			sess.user, sess.db = m[1], m[2]
		}
		sess.keep = p.Keeps(sess.user, sess.db, "")
		sess.attempt, sess.connectAt = e.command == "Connect", e.at
		g.open[e.thread] = sess
	case sess.attempt:
		sess.attempt = false // its thread went on: the login succeeded
	}
	if !sess.keep {
		p.Skip()
		if e.command == "Quit" {
			delete(g.open, e.thread)
		}
		return g.releaseHeld(p, name, false)
	}
	rec := capture.Record{Session: sess.key}
	switch e.command {
	case "Connect":
		rec.Kind, rec.User, rec.Database = capture.Connect, sess.user, sess.db
	case "Quit":
		rec.Kind = capture.Disconnect
		delete(g.open, e.thread)
	case "Query", "Execute":
		rec.Kind, rec.SQL = capture.Statement, arg
	case "Init DB":
		rec.Kind, rec.SQL = capture.Statement, "USE `"+strings.ReplaceAll(arg, "`", "``")+"`"
	default: // Prepare, Close stmt, Field List, Ping, ...
		p.Skip()
		return g.releaseHeld(p, name, false)
	}
	h := heldRecord{rec: rec, at: e.at, line: e.line}
	if rec.Kind == capture.Connect {
		h.sess = sess
	}
	g.held = append(g.held, h)
	return g.releaseHeld(p, name, false)
}

// releaseHeld writes the held records up to the first Connect still an
// attempt; all, if all.
func (g *generalLog) releaseHeld(p *capture.Parser, name string, all bool) error {
	n := 0
	for ; n < len(g.held); n++ {
		h := &g.held[n]
		if h.at.IsZero() {
			// An entry before the log's first time (a file that begins
			// within a second, after a reopen) takes the first time that
			// follows: within a second of it.
			if g.now.IsZero() && !all {
				break
			}
			h.at = g.now
		}
		if s := h.sess; s != nil && s.attempt {
			if !all && len(g.held) <= holdMax && g.now.Sub(s.connectAt) < holdFor {
				break
			}
			s.attempt = false
		}
		if s := h.sess; s != nil && !s.keep {
			continue // refused
		}
		if err := p.Emit(h.rec, h.at); err != nil {
			return fmt.Errorf("%s:%d: %w", name, h.line, err)
		}
	}
	if n > 0 {
		clear(g.held[:n])
		g.held = g.held[:copy(g.held, g.held[n:])]
	}
	return nil
}

// sessionKey is the key of a new session on thread id: the id, with "#2",
// "#3"... when the id began sessions in earlier server lifetimes.
func (g *generalLog) sessionKey(id uint64) string {
	if g.epochs[len(g.epochs)-1].has(id) {
		// A restart, which wrote a header: sessions from before that
		// ended with it, whether or not the log shows their Quit.
		g.epochs = append(g.epochs, idSet{})
		for thread, s := range g.open {
			if s.opened < g.opened {
				delete(g.open, thread)
			}
		}
	}
	g.epochs[len(g.epochs)-1].add(id)
	n := 1
	for _, e := range g.epochs[:len(g.epochs)-1] {
		if e.has(id) {
			n++
		}
	}
	key := strconv.FormatUint(id, 10)
	if n > 1 {
		key += "#" + strconv.Itoa(n)
	}
	return key
}

// idSet is a set of thread ids, a bit each: a server gives them out in
// order, so a log of millions of sessions needs a few hundred kilobytes.
type idSet map[uint64]uint64

func (s idSet) has(id uint64) bool { return s[id>>6]&(1<<(id&63)) != 0 }
func (s idSet) add(id uint64)      { s[id>>6] |= 1 << (id & 63) }

// digits says s is one or more ASCII digits.
func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

package postgres

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/capture"
)

// What a stderr log's reader keeps between lines is the open sessions,
// not the ended ones: a log of 20,000 short sessions, told apart by
// process id, leaves nothing behind.
func TestStderrStateIsOpenSessionsOnly(t *testing.T) {
	const sessions = 20000
	var log strings.Builder
	for i := range sessions {
		for _, msg := range []string{"connection authorized: user=app database=shop", "statement: SELECT 1", "disconnection: session time: 0:00:00.001 user=app database=shop host=[local]"} {
			fmt.Fprintf(&log, "2026-11-22 10:00:00.000 UTC [%d] app@shop LOG:  %s\n", 1000+i, msg)
		}
	}
	l, err := NewLogReader("stderr", nil)
	if err != nil {
		t.Fatal(err)
	}
	w := capture.NewWriter(io.Discard, capture.Header{})
	p := capture.ReadWith(l, capture.Filter{}, w)
	if err := p.Parse(context.Background(), strings.NewReader(log.String()), "log"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Sessions != sessions || st.Statements != sessions {
		t.Errorf("stats %+v", st)
	}
	if s := l.stderr; len(s.pids) != 0 || len(s.who) != 0 || s.pending != nil {
		t.Errorf("after the log: %d process ids, %d sessions' users, pending %v; want none", len(s.pids), len(s.who), s.pending != nil)
	}
}

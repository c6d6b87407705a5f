package capture

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"
)

// sessionsReader emits n sessions, each a connect, a statement and a
// disconnect, and leaves one more open: a reader as an engine's is.
type sessionsReader struct{ n int }

func (r sessionsReader) Read(ctx context.Context, p *Parser, _ io.Reader, _ string) error {
	at := time.Unix(0, 0)
	emit := func(rec Record) error {
		if err := p.Line(ctx); err != nil {
			return err
		}
		return p.Emit(rec, at)
	}
	if err := emit(Record{Kind: Connect, Session: "open", User: "app", Database: "shop"}); err != nil {
		return err
	}
	for i := range r.n {
		id := fmt.Sprintf("s%d", i)
		for _, rec := range []Record{{Kind: Connect, Session: id, User: "app", Database: "shop"}, {Kind: Statement, Session: id, SQL: "SELECT 1"}, {Kind: Disconnect, Session: id}} {
			if err := emit(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// What a parser and the writer keep between records is the open
// sessions, not the ended ones: 20,000 short sessions leave nothing
// behind. (Each engine's test says the same of its reader's state.)
func TestStateIsOpenSessionsOnly(t *testing.T) {
	const sessions = 20000
	w := NewWriter(io.Discard, Header{})
	p := ReadWith(sessionsReader{n: sessions}, Filter{}, w)
	if err := p.Parse(context.Background(), nil, "log"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Sessions != sessions+1 || st.Statements != sessions || st.Lines != 3*sessions+1 {
		t.Errorf("stats %+v", st)
	}
	if len(p.open) != 1 || len(w.open) != 1 {
		t.Errorf("open sessions: parser %d, writer %d; want 1", len(p.open), len(w.open))
	}
}

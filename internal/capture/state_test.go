package capture

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

// What a parser keeps between lines is the open sessions, not the ended
// ones: a log of 20,000 short sessions leaves nothing behind, on either
// engine, and the MariaDB thread ids it remembers take a bit each.
func TestStateIsOpenSessionsOnly(t *testing.T) {
	const sessions = 20000
	var pg, maria strings.Builder
	maria.WriteString("261122 10:00:00\t     1 Connect\tapp@localhost on shop using Socket\n") // open to the end
	for i := range sessions {
		id := fmt.Sprintf("6b02d58e.%x", i)
		for _, msg := range []string{"connection authorized: user=app database=shop", "statement: SELECT 1", "disconnection: session time: 0:00:00.001"} {
			fmt.Fprintf(&pg, "2026-11-22 10:00:00.000 UTC,app,shop,1,[local],%s,1,,2026-11-22 10:00:00 UTC,,0,LOG,00000,\"%s\",,,,,,,,,web,client backend,,0\n", id, msg)
		}
		fmt.Fprintf(&maria, "\t\t%6d Connect\tapp@localhost on shop using Socket\n\t\t%6d Query\tSELECT 1\n\t\t%6d Quit\t\n", i+2, i+2, i+2)
	}
	for _, tt := range []struct {
		source, log string
		open        int // sessions open at the end
	}{
		{"csvlog", pg.String(), 0},
		{"general-log", maria.String(), 1},
	} {
		w := NewWriter(io.Discard, Header{})
		p, _ := NewParser(tt.source, Filter{}, w)
		if err := p.Parse(context.Background(), strings.NewReader(tt.log), "log"); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if st := p.Stats(); st.Sessions != sessions+int64(tt.open) || st.Statements != sessions {
			t.Errorf("%s: stats %+v", tt.source, st)
		}
		g := p.mariadb
		if len(p.open) != tt.open || len(w.open) != tt.open || len(g.open) != tt.open || len(g.held) != 0 {
			t.Errorf("%s: open sessions: parser %d, writer %d, general log %d, %d records held; want %d, none held",
				tt.source, len(p.open), len(w.open), len(g.open), len(g.held), tt.open)
		}
		if ids := len(g.epochs[0]); ids > sessions/64+2 {
			t.Errorf("%s: %d words for %d thread ids", tt.source, ids, sessions)
		}
	}
}

package mariadb

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/capture"
)

// What the general log's reader keeps between lines is the open
// sessions, not the ended ones: a log of 20,000 short sessions leaves
// nothing behind, and the thread ids it remembers take a bit each.
func TestGeneralLogStateIsOpenSessionsOnly(t *testing.T) {
	const sessions = 20000
	var log strings.Builder
	log.WriteString("261122 10:00:00\t     1 Connect\tapp@localhost on shop using Socket\n") // open to the end
	for i := range sessions {
		fmt.Fprintf(&log, "\t\t%6d Connect\tapp@localhost on shop using Socket\n\t\t%6d Query\tSELECT 1\n\t\t%6d Quit\t\n", i+2, i+2, i+2)
	}
	w := capture.NewWriter(io.Discard, capture.Header{})
	g := newGeneralLog()
	p := capture.ReadWith(g, capture.Filter{}, w)
	if err := p.Parse(context.Background(), strings.NewReader(log.String()), "log"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Sessions != sessions+1 || st.Statements != sessions {
		t.Errorf("stats %+v", st)
	}
	if len(g.open) != 1 || len(g.held) != 0 {
		t.Errorf("open sessions: %d, %d records held; want 1, none held", len(g.open), len(g.held))
	}
	if ids := len(g.epochs[0]); ids > sessions/64+2 {
		t.Errorf("%d words for %d thread ids", ids, sessions)
	}
}

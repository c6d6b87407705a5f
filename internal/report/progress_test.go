package report

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/result"
)

// lockedBuffer is a bytes.Buffer safe for the status goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The live status line shows the run's statements per second as they
// happen, rewriting one line, and is cleared when the run ends.
func TestStatusLine(t *testing.T) {
	var out lockedBuffer
	p := experiment.Progress{Seq: 2, Total: 5, Round: 1, Rounds: 5, Condition: "general-log-file", Executed: new(atomic.Int64)}
	stop := make(chan struct{})
	go func() {
		for range 250 {
			p.Executed.Add(10)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	finished := make(chan struct{})
	go func() { statusLine(&out, p, stop); close(finished) }()
	time.Sleep(2300 * time.Millisecond)
	close(stop)
	<-finished
	s := out.String()
	if strings.Count(s, "\r\033[K[  2/5] round 1/5  general-log-file") < 2 || !strings.HasSuffix(s, "\r\033[K") {
		t.Fatalf("status output %q; want the line rewritten each second and cleared at the end", s)
	}
	// About 1,000 statements a second (10 every 10 ms), however the
	// machine schedules the writer.
	if !strings.Contains(s, "stmt/s") {
		t.Errorf("no rate in %q", s)
	}
}

// Off a terminal the printer writes one line per run and nothing live.
func TestProgressQuietOffTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || isTerminal(&bytes.Buffer{}) {
		t.Fatal("a file or buffer taken for a terminal")
	}
	pr := Progress(f)
	p := experiment.Progress{Seq: 1, Total: 1, Round: 1, Rounds: 1, Condition: "baseline", Executed: new(atomic.Int64)}
	pr(p)
	time.Sleep(1200 * time.Millisecond)
	p.Done, p.Run = true, &result.Run{Driver: driver.Result{Throughput: 1234}}
	pr(p)
	b, _ := os.ReadFile(f.Name())
	if strings.Contains(string(b), "\r") || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), "1234 stmt/s") {
		t.Errorf("log output %q; want one plain line per run", b)
	}
}

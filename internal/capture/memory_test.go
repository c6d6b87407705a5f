package capture_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
)

// synthLog generates PostgreSQL csvlog on the fly, without disk: 16
// sessions taking turns, a third of the statements prepared with two
// parameters, until size bytes.
type synthLog struct {
	size, made int64
	n          int
	buf        []byte
}

func (g *synthLog) Read(p []byte) (int, error) {
	if g.made >= g.size && len(g.buf) == 0 {
		return 0, io.EOF
	}
	for len(g.buf) < len(p) && g.made < g.size {
		g.n++
		sec, ms := g.n/10000, g.n%1000
		at := fmt.Sprintf("2026-11-22 %02d:%02d:%02d.%03d UTC", 10+sec/3600%10, sec/60%60, sec%60, ms)
		session := fmt.Sprintf("6543210%d.%x", g.n%16, g.n%16)
		var line string
		if g.n%3 == 0 {
			line = fmt.Sprintf(`%s,app,shop,4242,[local],%s,%d,SELECT,2026-11-22 10:00:00 UTC,3/%d,0,LOG,00000,"execute stmt_1: SELECT o.id, o.total FROM orders o JOIN customers c ON c.id = o.customer WHERE c.region = $1 AND o.day > $2 /* obsbench */","parameters: $1 = 'north, ''east''', $2 = '2026-01-%02d'",,,,,,,,web,client backend,,0`+"\n",
				at, session, g.n, g.n, g.n%28+1)
		} else {
			line = fmt.Sprintf(`%s,app,shop,4242,[local],%s,%d,SELECT,2026-11-22 10:00:00 UTC,3/%d,0,LOG,00000,"statement: SELECT count(*) FROM order_lines WHERE product = %d AND qty > 1 /* obsbench */",,,,,,,,,web,client backend,,0`+"\n",
				at, session, g.n, g.n, g.n)
		}
		g.buf = append(g.buf, line...)
		g.made += int64(len(line))
	}
	n := copy(p, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[n:])]
	return n, nil
}

// A capture of a log larger than 1 GiB runs in bounded memory: the heap in
// use stays under 64 MiB throughout (it holds buffers and the per-session
// state, never the log).
func TestCaptureOfOverOneGiBInBoundedMemory(t *testing.T) {
	const size = 1<<30 + 64<<20
	src := &synthLog{size: size}
	w := capture.NewWriter(io.Discard, capture.Header{Engine: "postgres", Source: "csvlog"})
	p, err := capture.NewParser("csvlog", capture.Filter{}, w)
	if err != nil {
		t.Fatal(err)
	}
	var peak, peakSys uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				mu.Lock()
				peak, peakSys = max(peak, ms.HeapInuse), max(peakSys, ms.Sys)
				mu.Unlock()
			}
		}
	}()
	began := time.Now()
	err = p.Parse(context.Background(), src, "synthetic.csv")
	if err == nil {
		err = w.Close()
	}
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	secs := time.Since(began).Seconds()
	st := p.Stats()
	t.Logf("captured %d statements of %d sessions from %.2f GiB in %.1f s (%.0f MB/s); peak heap in use %.1f MiB, peak memory from the OS %.1f MiB",
		st.Statements, st.Sessions, float64(src.made)/(1<<30), secs, float64(src.made)/1e6/secs, float64(peak)/(1<<20), float64(peakSys)/(1<<20))
	if src.made < 1<<30 || st.Statements != int64(src.n) || st.Sessions != 16 {
		t.Errorf("read %d bytes, %d statements of %d sessions; want over 1 GiB, %d statements of 16", src.made, st.Statements, st.Sessions, src.n)
	}
	if peak > 64<<20 {
		t.Errorf("peak heap in use %.1f MiB; want under 64 MiB (the capture must stream)", float64(peak)/(1<<20))
	}
}

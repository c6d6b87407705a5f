package capture_test

import (
	"context"
	"io"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/capture"
)

// synthLog generates PostgreSQL 15 csvlog on the fly, without disk, until
// size bytes: 16 sessions at a time, each connecting, running 60
// statements (a third prepared with two parameters) and disconnecting,
// then replaced by a new one; a line every 0.1 ms.
type synthLog struct {
	size, made int64
	buf        []byte
	// lines, statements, sessions generated so far
	lines, statements, sessions int64
	slots                       [16]struct{ id, ran int64 }
	second                      int64  // of the latest time written
	stamp                       []byte // "2026-11-22 10:00:00." of that second
}

const synthPerSession = 60

func (g *synthLog) Read(p []byte) (int, error) {
	if g.made >= g.size && len(g.buf) == 0 {
		return 0, io.EOF
	}
	for len(g.buf) < len(p) && g.made < g.size {
		before := len(g.buf)
		s := &g.slots[g.lines%16]
		switch {
		case s.id == 0:
			g.sessions++
			s.id, s.ran = g.sessions, 0
			g.line(s.id, "connection authorized: user=app database=shop application_name=web", "")
		case s.ran == synthPerSession:
			g.line(s.id, "disconnection: session time: 0:00:00.006 user=app database=shop host=[local]", "")
			s.id = 0
		case s.ran%3 == 2:
			s.ran++
			g.statements++
			g.line(s.id, "execute stmtcache_1: SELECT o.id, o.total FROM orders o JOIN customers c ON c.id = o.customer WHERE c.region = $1 AND o.day > $2 /* obsbench */",
				"parameters: $1 = 'north, ''east''', $2 = '2026-01-"+strconv.Itoa(int(g.lines%28+10))+"'")
		default:
			s.ran++
			g.statements++
			g.line(s.id, "statement: SELECT count(*) FROM order_lines WHERE product = "+strconv.FormatInt(g.lines, 10)+" AND qty > 1 /* obsbench */", "")
		}
		g.made += int64(len(g.buf) - before)
	}
	n := copy(p, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[n:])]
	return n, nil
}

// line appends one csvlog line of session id.
func (g *synthLog) line(id int64, message, detail string) {
	g.lines++
	tenths := g.lines // of a millisecond
	if sec := tenths / 10000; sec != g.second || g.stamp == nil {
		g.second = sec
		t := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Add(time.Duration(sec) * time.Second)
		g.stamp = t.AppendFormat(g.stamp[:0], "2006-01-02 15:04:05.")
	}
	b := append(g.buf, g.stamp...)
	ms := tenths % 10000 / 10
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	b = append(b, " UTC,app,shop,4242,[local],6b02d58e."...)
	b = strconv.AppendInt(b, id, 16)
	b = append(b, ',')
	b = strconv.AppendInt(b, g.lines, 10)
	b = append(b, ",SELECT,2026-11-22 10:00:00 UTC,3/1,0,LOG,00000,"...)
	b = appendCSV(b, message)
	b = append(b, ',')
	if detail != "" {
		b = appendCSV(b, detail)
	}
	g.buf = append(b, ",,,,,,,,web,client backend,,0\n"...)
}

func appendCSV(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// A capture of a log larger than 1 GiB runs in bounded memory: the heap in
// use stays under 64 MiB throughout (it holds buffers and the open
// sessions, never the log, nor the sessions that ended).
func TestCaptureOfOverOneGiBInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 1 GiB (15-20 s): second tier, not run with -short")
	}
	const size = 1<<30 + 32<<20
	src := &synthLog{size: size}
	w := capture.NewWriter(io.Discard, capture.Header{Engine: "postgres", Source: "csvlog"})
	p, err := capture.NewParser("csvlog", capture.Filter{ExcludeUsers: []string{"obsbench_system"}}, w)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var peak, peakSys uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
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
	})
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
	t.Logf("captured %d statements of %d sessions from %.3f GiB (%d bytes) in %.1f s (%.0f MB/s); peak heap in use %.1f MiB, peak memory from the OS %.1f MiB",
		st.Statements, st.Sessions, float64(src.made)/(1<<30), src.made, secs, float64(src.made)/1e6/secs, float64(peak)/(1<<20), float64(peakSys)/(1<<20))
	if src.made <= 1<<30 || st.Statements != src.statements || st.Sessions != src.sessions || st.Lines != src.lines {
		t.Errorf("read %d bytes, %d lines, %d statements of %d sessions; want over 1 GiB, %d lines, %d statements of %d sessions",
			src.made, st.Lines, st.Statements, st.Sessions, src.lines, src.statements, src.sessions)
	}
	if peak > 64<<20 {
		t.Errorf("peak heap in use %.1f MiB; want under 64 MiB (the capture must stream)", float64(peak)/(1<<20))
	}
}

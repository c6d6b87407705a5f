package capture

// A long capture says how far it has read, and tells the logs' own read
// errors and the output's write errors from bad input.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"
)

// captureProgressEvery is how often a long capture reports its progress.
var captureProgressEvery = 5 * time.Second

// parseLog captures one file; readErr is its own read error, if any.
func parseLog(ctx context.Context, p *Parser, path string, in *inputProgress) (err, readErr error) {
	f, err := os.Open(path)
	if err != nil {
		return err, err
	}
	defer f.Close()
	in.file.Store(&path)
	r := &countingReader{r: f, n: &in.read}
	err = p.Parse(ctx, r, path)
	return err, r.err
}

// inputProgress is how far a capture has read.
type inputProgress struct {
	total int64
	read  atomic.Int64
	file  atomic.Pointer[string]
}

// report prints the progress every interval until the returned stop.
func (in *inputProgress) report(w io.Writer, began time.Time, every time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read, secs := in.read.Load(), time.Since(began).Seconds()
				var file string
				if f := in.file.Load(); f != nil {
					file = *f
				}
				fmt.Fprintf(w, "obsbench: capture: %.0f of %.0f MB read (%.0f%%), %.0f MB/s, %s elapsed, in %s\n",
					float64(read)/1e6, float64(in.total)/1e6, 100*float64(read)/float64(max(in.total, 1)), float64(read)/1e6/secs,
					time.Since(began).Round(time.Second), file)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// countingReader counts the bytes read through it and keeps its error.
type countingReader struct {
	r   io.Reader
	n   *atomic.Int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	if err != nil && !errors.Is(err, io.EOF) && c.err == nil {
		c.err = err
	}
	return n, err
}

// errWriter counts the bytes written through it and keeps its error.
type errWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	e.n += int64(n)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

package observer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/observer"
)

// FuzzParse feeds the observer-file parser arbitrary bytes. It must never
// panic, and every error must point at a place in the file (a
// SyntaxError with a line and column inside it). Seeds: the built-in
// catalog, the test files, and the committed corpus in
// testdata/fuzz/FuzzParse. Run longer with
// `go test ./internal/observer -fuzz FuzzParse -fuzztime 60s`.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("catalog", "*.yaml"))
	more, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, p := range append(seeds, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("- name: x\n  engine: postgres\n  description: d\n  sink: {kind: stream, rate: 1MiB}\n"))
	f.Add([]byte("- name: x\n  engine: postgres\n  description: d\n  settings: {log_directory: '{{sink_dir}}'}\n  sink: {kind: slow-dir, write_delay: 1ms}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			obs  []observer.Observer
			err  error
			done = make(chan struct{})
		)
		go func() {
			defer close(done)
			obs, err = observer.Parse("fuzz.yaml", data)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Parse took over 5s on %q", data)
		}
		if err == nil {
			for _, o := range obs {
				if o.Name == "" || o.Source == "" {
					t.Fatalf("accepted an observer without name or source: %+v", o)
				}
			}
			return
		}
		var se *observer.SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("error %v (%T) is not a SyntaxError", err, err)
		}
		// YAML also breaks lines at a lone \r.
		lines := strings.Count(string(data), "\n") + strings.Count(string(data), "\r") + 1
		if se.Line < 1 || se.Line > lines+1 || se.Column < 0 || se.File != "fuzz.yaml" {
			t.Fatalf("error %v points outside the %d-line input", err, lines)
		}
	})
}

package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The table for each recorded summary (testdata/*.json) matches its golden
// file (the same name, .txt).
func TestTextGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	if len(files) < 2 {
		t.Fatalf("%d summaries in testdata; want a rounds and an alternation one", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { checkGolden(t, f) })
	}
}

func checkGolden(t *testing.T, path string) {
	s := readSummary(t, path)
	var got bytes.Buffer
	if err := report.Text(&got, s); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, strings.TrimSuffix(path, ".json")+".txt", got.Bytes())
}

func readSummary(t *testing.T, path string) result.Summary {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s result.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// compareGolden checks got against the golden file (rewritten with -update).
func compareGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(golden+".got", got, 0o644)
		t.Errorf("output differs from %s (got in %s.got; go test -update to accept)", golden, golden)
	}
}

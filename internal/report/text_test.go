package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The table for a recorded summary matches the golden file.
func TestTextGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s result.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := report.Text(&got, s); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "summary.txt")
	if *update {
		os.WriteFile(golden, got.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		os.WriteFile(golden+".got", got.Bytes(), 0o644)
		t.Errorf("Text output differs from %s (got in %s.got; go test -update to accept)", golden, golden)
	}
}

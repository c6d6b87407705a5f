package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/study"
)

// A study's own table, from the summary of a real run of the study.
func TestStudyGolden(t *testing.T) {
	path := filepath.Join("testdata", "study-wait-signatures.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s result.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	st, err := study.Lookup("wait-signatures", "postgres")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := report.Study(&got, st, s); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "study-wait-signatures.study.txt")
	if *update {
		os.WriteFile(golden, got.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		os.WriteFile(golden+".got", got.Bytes(), 0o644)
		t.Errorf("Study output differs from %s (got in %s.got; go test -update to accept)", golden, golden)
	}
}

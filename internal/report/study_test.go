package report_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/study"
)

// A study's own table, from the summary of a real run of the study.
func TestStudyGolden(t *testing.T) {
	s := readSummary(t, filepath.Join("testdata", "study-wait-signatures.json"))
	st, err := study.Lookup("wait-signatures", "postgres")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := report.Study(&got, st, s); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, filepath.Join("testdata", "study-wait-signatures.study.txt"), got.Bytes())
}

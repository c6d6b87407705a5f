package report_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/study"
)

// A study's own table, from the summary of a real run of the study on
// each engine.
func TestStudyGolden(t *testing.T) {
	for engine, name := range map[string]string{"postgres": "study-wait-signatures", "mariadb": "study-wait-signatures-mariadb"} {
		t.Run(engine, func(t *testing.T) {
			s := readSummary(t, filepath.Join("testdata", name+".json"))
			st, err := study.Lookup(engine, "wait-signatures")
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := report.Study(&got, st, s); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", name+".study.txt"), got.Bytes())
		})
	}
}

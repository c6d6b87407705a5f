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
	var got, wide bytes.Buffer
	if err := report.Text(&got, s); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, strings.TrimSuffix(path, ".json")+".txt", got.Bytes())
	if err := report.TextWide(&wide, s); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, strings.TrimSuffix(path, ".json")+".wide.txt", wide.Bytes())
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

// checkHas checks that text, what is named, has each of wants.
func checkHas(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, text)
		}
	}
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

// Where nothing was counted, the table says why in one line, and keeps
// its timed CPU column.
func TestTextNotCounted(t *testing.T) {
	s := readSummary(t, filepath.Join("testdata", "duet.json"))
	s.Counted = &result.Counted{Missing: "valgrind is not installed (apt-get install valgrind)"}
	var got bytes.Buffer
	if err := report.Text(&got, s); err != nil {
		t.Fatal(err)
	}
	checkHas(t, "table", got.String(), "\ninstr/stmt: not counted: valgrind is not installed (apt-get install valgrind)\n", "CPU/stmt Δ%\n")
	if strings.Contains(got.String(), "instr/stmt Δ%") {
		t.Errorf("a counted column with nothing counted:\n%s", got.String())
	}
}

// A row that measures an observer's switchable part is not what the count
// measured (the whole observer): it shows no counted change.
func TestTextCountedWholeRowsOnly(t *testing.T) {
	s := readSummary(t, filepath.Join("testdata", "duet-counted.json"))
	s.Conditions[1].Measures = result.MeasuresSwitchable
	var got bytes.Buffer
	if err := report.Text(&got, s); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(got.String(), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.Contains(line, "too few samples") { // the cost table's rows
			continue
		}
		switch fields[0] {
		case s.Conditions[1].Name:
			if fields[len(fields)-1] != "-" {
				t.Errorf("switchable row: %q; want no counted change", line)
			}
		case s.Conditions[2].Name:
			if fields[len(fields)-1] == "-" {
				t.Errorf("whole row: %q; want its counted change", line)
			}
		}
	}
}

// The workers' table is in the default report when a condition's sessions
// ran in more than one worker process; with one, only -v shows it.
func TestWorkersShownWhenScaledOut(t *testing.T) {
	for _, n := range []int{1, 3} {
		s := readSummary(t, filepath.Join("testdata", "summary.json"))
		for i := range s.Conditions {
			s.Conditions[i].Workers = nil
			for k := range n {
				s.Conditions[i].Workers = append(s.Conditions[i].Workers, result.WorkerSummary{Worker: k, Host: "vm", Sessions: 1, Throughput: 1000, CPUPct: 20, CPUPctMax: 25})
			}
		}
		var got, wide bytes.Buffer
		if err := report.Text(&got, s); err != nil {
			t.Fatal(err)
		}
		if err := report.TextWide(&wide, s); err != nil {
			t.Fatal(err)
		}
		const table = "workers (median of whole runs"
		if shown := strings.Contains(got.String(), table); shown != (n > 1) {
			t.Errorf("%d worker(s): the default report shows the workers: %v; want %v", n, shown, n > 1)
		}
		if !strings.Contains(wide.String(), table) {
			t.Errorf("%d worker(s): -v lacks the workers' table", n)
		}
	}
}

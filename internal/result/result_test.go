package result_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/result"
)

func TestAppendAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	runs := []result.Run{
		{Seq: 1, Round: 1, Condition: "baseline", Started: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
			Driver: driver.Result{Clients: 2, Measured: 10, Executed: 12, PerSecond: [][]int64{{5}, {5}}}},
		{Seq: 2, Round: 1, Condition: "log-statements-file", Events: &result.Events{Recorded: 12, Executed: 12}, Error: "x"},
	}
	w, err := result.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	// A second experiment never appends to, or truncates, the first's.
	if _, err := result.Create(path); err == nil || !strings.Contains(err.Error(), "choose another --out") {
		t.Errorf("Create(existing) = %v; want a refusal", err)
	}

	got, err := result.ReadRuns(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("ReadRuns: %d runs; want 2", len(got))
	}
	for i, want := range runs {
		want.Version = result.Version
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("run %d = %+v; want %+v", i, got[i], want)
		}
	}

	os.WriteFile(path, []byte(`{"seq":1}`+"\n"+`{"seq":2,"condi`), 0o644)
	if _, err := result.ReadRuns(path); err == nil || !strings.Contains(err.Error(), "results.jsonl:2:") {
		t.Errorf("ReadRuns(truncated) = %v; want an error at line 2", err)
	}
}

func TestRecords(t *testing.T) {
	if n := result.Records(nil); n != 0 {
		t.Errorf("Records(nil) = %d", n)
	}
	files := []result.FileCount{{Name: "a", Records: 3, Bytes: 100}, {Name: "b", Records: 4, Bytes: 7}}
	if n := result.Records(files); n != 7 {
		t.Errorf("Records = %d; want 7, the records and not the bytes", n)
	}
}

package result_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// The schema's version is the one summaries are written with, and a
// summary written by result.WriteSummary validates, with its unmeasured
// values null; one with a key the schema lacks, or 0 where null belongs
// to nothing, does not.
func TestSchemaMatchesWriter(t *testing.T) {
	var doc struct {
		Properties struct {
			Version struct {
				Const int `json:"const"`
			} `json:"version"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(result.SummarySchema, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Properties.Version.Const != result.SummaryVersion {
		t.Errorf("schema is for version %d; summaries are written as %d", doc.Properties.Version.Const, result.SummaryVersion)
	}
	path := filepath.Join(t.TempDir(), "summary.json")
	s := result.Summary{Engine: "postgres", Server: "15.18", Workload: "credit-top1", Clients: 16, Seed: 1, Method: "m",
		Conditions: []result.ConditionSummary{{Name: "baseline", Throughput: result.ThroughputSummary{Runs: []float64{}}}}}
	if err := result.WriteSummary(path, s); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if err := result.ValidateSummary(b); err != nil {
		t.Fatalf("a written summary does not validate: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), `"noise_floor_pct": null`) {
		t.Errorf("unmeasured noise floor not null:\n%s", b)
	}
	extra := strings.Replace(string(b), `"engine":`, `"surprise": 1, "engine":`, 1)
	if err := result.ValidateSummary([]byte(extra)); err == nil {
		t.Error("a summary with a key the schema lacks validates")
	}
}

// The report's recorded summaries (real runs: rounds, alternation, a mix
// compared query by query, studies) validate.
func TestRecordedSummariesValidate(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "report", "testdata", "*.json"))
	if len(files) < 3 {
		t.Fatalf("%d recorded summaries; want the report's testdata", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s result.Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// Written again by this version: recorded files may predate a key.
		path := filepath.Join(t.TempDir(), "summary.json")
		if err := result.WriteSummary(path, s); err != nil {
			t.Fatal(err)
		}
		if b, _ = os.ReadFile(path); result.ValidateSummary(b) != nil {
			t.Errorf("%s: %v", f, result.ValidateSummary(b))
		}
	}
}

// Every key of summary.json that docs/usage.md lists is in the schema,
// and every key in the schema is listed.
func TestDocsListEveryKey(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "usage.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "- `OUT/summary.json`")
	end := strings.Index(text[start:], "\n- ")
	if start < 0 || end < 0 {
		t.Fatal("docs/usage.md has no `OUT/summary.json` item")
	}
	listed := map[string]bool{}
	word := regexp.MustCompile(`[a-z][a-z0-9_]*`)
	for _, code := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(text[start:start+end], -1) {
		c := code[1]
		if (strings.ContainsAny(c, " /.") && !strings.ContainsAny(c, "{")) || strings.HasPrefix(c, "_") || strings.ToLower(c) != c {
			continue // a value, a path, a name's suffix or an engine's name: not a key
		}
		for _, w := range word.FindAllString(c, -1) {
			listed[w] = true
		}
	}
	keys, err := result.SummaryKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !listed[k] {
			t.Errorf("summary.json key %q is not listed in docs/usage.md", k)
		}
	}
	values := []string{"whole", "switchable", "part", "runs", "on", "phases", "name", "per", "second"}
	for k := range listed {
		if !slices.Contains(keys, k) && !slices.Contains(values, k) {
			t.Errorf("docs/usage.md lists %q, which summary.json has no key for", k)
		}
	}
}

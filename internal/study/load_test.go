package study

import (
	"errors"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/yamlfile"
)

// Every built-in file loads, and every study's entry for an engine has a
// title and a question (SQL Server's entries once lost their titles to
// the order Go runs init functions in).
func TestBuiltinStudies(t *testing.T) {
	all := All()
	if len(all) < 14 {
		t.Fatalf("%d built-in studies; want the five studies on two or three engines each", len(all))
	}
	for _, st := range all {
		if st.Title == "" || st.Question == "" || len(st.Rows) == 0 {
			t.Errorf("%s/%s: title %q, question %q, %d rows", st.Name, st.Engine, st.Title, st.Question, len(st.Rows))
		}
	}
}

// A study file that is wrong says where: file:line:column and what would
// be valid.
func TestParseErrors(t *testing.T) {
	const head = "name: s\ntitle: T\nquestion: Q\nengines:\n"
	const entry = "  - engine: postgres\n    workload: credit-top1\n    clients: 1\n"
	const rows = "    rows:\n      - {observer: baseline, original: b}\n"
	for _, tt := range []struct {
		name, data, want string
	}{
		{"unknown field", head + entry + "    method: rounds\n    colour: red\n" + rows, `studies/s.yaml:9:5: unknown field "colour"`},
		{"method", head + entry + "    method: sometimes\n" + rows, `studies/s.yaml:8:5: method "sometimes": want auto, alternation, rounds, instructions, duet, split or split,duet`},
		{"wrong type", head + entry + "    method: rounds\n    waits: often\n" + rows, "studies/s.yaml:9:12: waits often: want a duration with its unit, such as 5s or 10ms"},
		{"name", "name: other\ntitle: T\nquestion: Q\nengines:\n" + entry + "    method: rounds\n" + rows, `studies/s.yaml:1:1: name "other": want the file's name, "s"`},
		{"baseline first", head + entry + "    method: rounds\n    rows:\n      - {observer: general-log-file, original: x}\n", `studies/s.yaml:9:5: the first row is "general-log-file": want the baseline first`},
		{"variant", head + entry + "    method: rounds\n    matrix:\n      - {target: t, variant: sideways, observer: o}\n", `studies/s.yaml:9:5: o: variant "sideways": want as is, lossy, more fields or filtered out`},
		{"A/A cell", head + entry + "    method: duet\n    matrix:\n      - {target: \"" + aaTarget + "\", variant: as is, observer: baseline-again}\n", `studies/s.yaml:9:5: the A/A cell is "baseline-again": want "baseline A/A" with method duet`},
		{"rows and matrix", head + entry + "    method: rounds\n    matrix:\n      - {target: t, variant: as is, observer: o}\n" + rows, `studies/s.yaml:11:5: a matrix makes the rows: give one or the other`},
		{"two entries", head + entry + "    method: rounds\n" + rows + entry + "    method: rounds\n" + rows, `studies/s.yaml:11:5: engine postgres has two entries`},
		{"count shrink negative", head + entry + "    method: rounds\n    count: {statements: 10, warmup: 0, shrink: -1}\n" + rows, `studies/s.yaml:9:5: count: shrink -1: want 1 or more (or none: the timed runs' dataset)`},
		{"count too few", head + entry + "    method: rounds\n    count: {statements: 5, warmup: 0}\n" + rows, `studies/s.yaml:9:5: count: 5 statements after 0: want 10 or more after 0 or more`},
		{"audit without sessions", head + entry + "    method: rounds\n    audit: pgaudit-rotated\n" + rows, `studies/s.yaml:5:5: audit and sessions go together`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("studies/s.yaml", []byte(tt.data))
			var se *yamlfile.SyntaxError
			if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Parse = %v; want an error starting %q", err, tt.want)
			}
		})
	}
}

package report

import (
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/obsbench/obsbench/internal/result"
)

// Statements prints each statement's mean latency per condition, as
// pgbench -r does for one run: the statements of a user's scripts, each
// over its condition's window (runs, or on phases), pooled over runs.
// Nothing for workloads that do not name their statements.
func Statements(w io.Writer, s result.Summary) error {
	m := statementMatrix(s)
	if len(m.Rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nlatency per statement (mean ms over each condition's window, as pgbench -r; count in brackets):")
	return statementTable(w, m.Names, m.Rows)
}

// statementTable writes a row per statement, a column per condition, as
// many columns beside the statements as the width takes.
func statementTable(w io.Writer, names []string, rows []counterRow) error {
	t := columns{head: append([]string{"statement"}, names...), left: []bool{true}}
	for _, r := range rows {
		t.add(append([]string{r.Name}, r.Values...)...)
	}
	return t.writeFitted(w, 1)
}

// statementMatrix is a row per statement, a column per condition (Names),
// each cell the statement's mean latency and count.
func statementMatrix(s result.Summary) counterView {
	return statementCells(s, func(st result.StatementLatency) (string, bool) {
		return fmt.Sprintf("%.3f (%s)", st.MeanMS, thousands(float64(st.Count))), st.Count > 0
	})
}

// statementCells is a row per statement, a column per condition (Names),
// each cell what cell says of the statement in the condition ("-" where
// it has nothing).
func statementCells(s result.Summary, cell func(result.StatementLatency) (string, bool)) counterView {
	var v counterView
	var stmts []string
	for _, c := range s.Conditions {
		v.Names = append(v.Names, c.Name)
		for _, st := range c.Statements {
			if !slices.Contains(stmts, st.Statement) {
				stmts = append(stmts, st.Statement)
			}
		}
	}
	for _, name := range stmts {
		row := counterRow{Name: shortStatement(name), Full: name}
		for _, c := range s.Conditions {
			text := "-"
			for _, st := range c.Statements {
				if st.Statement != name {
					continue
				}
				if t, ok := cell(st); ok {
					text = t
				}
			}
			row.Values = append(row.Values, text)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// statementWidth is the most of a statement's name a table shows.
const statementWidth = 60

// shortStatement is a statement's name as a table shows it: whole up to
// statementWidth bytes, else its start and "...". summary.json keeps the
// name whole.
func shortStatement(name string) string {
	if len(name) <= statementWidth {
		return name
	}
	cut := statementWidth - 3
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "..."
}

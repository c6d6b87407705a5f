package pgbench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/workload"
)

// QueryMode is how a statement reaches the server: pgbench's -M, with its
// names and meanings.
type QueryMode string

const (
	// Simple sends each statement as text, the variables' values
	// substituted into it (PostgreSQL's simple query protocol, MariaDB's
	// text protocol): pgbench's default. The server parses and plans each
	// execution.
	Simple QueryMode = "simple"
	// Extended sends each statement with its variables as parameters,
	// parsed anew every time (an unnamed statement: Parse, Bind, Execute).
	Extended QueryMode = "extended"
	// Prepared prepares each statement once per session and then only
	// binds and executes it (PostgreSQL named statements, MariaDB
	// server-side prepared statements).
	Prepared QueryMode = "prepared"
)

// QueryModes are the modes, in pgbench's order.
var QueryModes = []QueryMode{Simple, Extended, Prepared}

// ParseQueryMode reads a --query-mode value.
func ParseQueryMode(s string) (QueryMode, error) {
	for _, m := range QueryModes {
		if s == string(m) {
			return m, nil
		}
	}
	return "", fmt.Errorf("query mode %q: want simple, extended or prepared (pgbench's -M)", s)
}

// TextConn is a session that runs a statement of the workloads' portable
// SQL once as text (simple mode): PostgreSQL's simple query protocol,
// MariaDB's COM_QUERY, a SQL Server batch.
type TextConn interface {
	ExecText(ctx context.Context, sql string) error
	QueryText(ctx context.Context, sql string) (columns []string, rows [][]*string, err error)
}

// UnnamedConn is a session that sends a statement with its parameters and
// has the server parse it at every execution (extended mode): PostgreSQL's
// unnamed statement. Unnamed sends nothing; the statement's every Exec
// does.
type UnnamedConn interface {
	Unnamed(sql string) workload.Stmt
}

// ModeError is a statement that failed in one query mode for a reason
// another mode avoids: what the server said, in which mode, and what to
// try.
type ModeError struct {
	Mode    QueryMode
	Where   string // file:line
	Err     error
	Suggest QueryMode
}

func (e *ModeError) Error() string {
	return fmt.Sprintf("%s: in --query-mode %s: %v (the statement's parameters get no type from their text in %s mode; --query-mode %s puts the values into the text, as pgbench does by default)",
		e.Where, e.Mode, e.Err, e.Mode, e.Suggest)
}

func (e *ModeError) Unwrap() error { return e.Err }

// typeInference are the SQLSTATEs of a statement whose parameters the
// server could not type (42725 ambiguous function or operator, 42P18
// indeterminate datatype, 42883 no function or operator matches the
// "unknown" arguments): in simple mode the values are literals in the
// text and the same statement may run.
var typeInference = []string{"42725", "42P18", "42883"}

// modeError wraps err as a *ModeError when it is a failure that simple
// mode avoids, in the extended or prepared mode.
func modeError(mode QueryMode, where string, err error) error {
	if mode == Simple || err == nil {
		return err
	}
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) && slices.Contains(typeInference, coded.SQLState()) {
		return &ModeError{Mode: mode, Where: where, Err: err, Suggest: Simple}
	}
	return err
}

// substitute is the statement of simple mode: each :name in raw whose
// variable is set replaced by the variable's value, as pgbench's
// assignVariables does: anywhere in the text (quotes and comments
// included), the value as it is (no quoting), a name without a variable
// left as written, and "::" (a cast) skipped. A replaced value is not
// scanned again.
func substitute(raw string, vars map[string]string) string {
	var b strings.Builder
	done := 0 // raw[:done] is in b
	for p := 0; p < len(raw); {
		if raw[p] != ':' {
			p++
			continue
		}
		// pgbench's parseVariable: a letter, '_' or a byte >= 0x80, then
		// those or digits.
		end := p + 1
		if end < len(raw) && isAlpha(raw[end]) {
			for end++; end < len(raw) && isAlnum(raw[end]); end++ {
			}
		}
		if end == p+1 {
			for p < len(raw) && raw[p] == ':' {
				p++
			}
			continue
		}
		v, ok := vars[raw[p+1:end]]
		if !ok {
			p++
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(raw) + 16)
		}
		b.WriteString(raw[done:p])
		b.WriteString(v)
		done, p = end, end
	}
	if done == 0 {
		return raw
	}
	b.WriteString(raw[done:])
	return b.String()
}

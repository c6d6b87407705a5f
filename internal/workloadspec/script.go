package workloadspec

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/pgbench"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// scriptFlags are the settings only --workload pgbench and sql take.
var scriptFlags = []string{"script", "define", "dataset", "query-mode"}

// scriptWorkload builds --workload pgbench or sql from s.Script: every
// file is read and parsed here, so that a script's error stops the
// command before anything starts, with file:line.
func scriptWorkload(s spec.Spec, read ReadFile) (workload.Meta, []result.Script, error) {
	sc := s.Script
	if sc.Dataset != "" {
		if _, err := dataset.Lookup(sc.Dataset); err != nil {
			return workload.Meta{}, nil, spec.Invalidf("--dataset: %v", err)
		}
	}
	mode, err := queryMode(s)
	if err != nil {
		return workload.Meta{}, nil, err
	}
	if len(sc.Files) == 0 {
		if s.Workload == "sql" {
			return workload.Meta{}, nil, spec.Invalidf("--workload sql needs --script FILE: a file of SQL statements separated by ';'")
		}
		return workload.Meta{}, nil, spec.Invalidf("--workload pgbench needs --script: a pgbench script FILE[@WEIGHT] or a built-in (%s), repeatable", builtinNames())
	}
	if s.Workload == "sql" {
		return sqlWorkload(sc, mode, read)
	}
	defines := map[string]string{}
	for _, d := range sc.Defines {
		name, value, ok := strings.Cut(d, "=")
		if !ok || !pgbench.ValidName(name) {
			return workload.Meta{}, nil, spec.Invalidf("--define %q: want NAME=VALUE, NAME a letter or _ then letters, digits or _ (pgbench -D)", d)
		}
		defines[name] = value
	}
	var list []pgbench.Weighted
	var rec []result.Script
	total := 0
	for _, arg := range sc.Files {
		w, err := loadScript(arg, read)
		if err != nil {
			return workload.Meta{}, nil, err
		}
		total += w.Weight
		list = append(list, w.Weighted)
		rec = append(rec, result.Script{Path: w.Script.Name, SHA256: w.sum, Weight: w.Weight})
	}
	if total == 0 {
		return workload.Meta{}, nil, spec.Invalidf("--script: every script has weight 0; the weights must not all be zero (pgbench: total script weight must not be zero)")
	}
	if total > math.MaxInt32 {
		return workload.Meta{}, nil, spec.Invalidf("--script: the weights add up to %d, over %d", total, math.MaxInt32)
	}
	return pgbench.Meta(pgbench.Options{Scripts: list, Defines: defines, Seed: s.Seed, Dataset: sc.Dataset, Mode: mode}), rec, nil
}

// QueryModeMeaning says what each query mode sends (--dry-run).
var QueryModeMeaning = map[pgbench.QueryMode]string{
	pgbench.Simple:   "each statement sent as text with the variables' values in it, parsed and planned at every execution (pgbench's default)",
	pgbench.Extended: "each statement sent with its variables as parameters, parsed and planned at every execution (an unnamed statement)",
	pgbench.Prepared: "each statement prepared once per session, then executed with its variables as parameters",
}

// QueryModeName is the query mode of s's pgbench or sql workload, ""
// for the others.
func QueryModeName(s spec.Spec) string {
	if s.Workload != "pgbench" && s.Workload != "sql" {
		return ""
	}
	m, _ := queryMode(s) // checked when the workload was built
	return string(m)
}

// queryMode is --query-mode, simple when not given (pgbench's default).
// Extended is PostgreSQL's protocol alone: MariaDB and SQL Server send a
// statement as text or with parameters to a prepared statement.
func queryMode(s spec.Spec) (pgbench.QueryMode, error) {
	if s.Script.QueryMode == "" {
		return pgbench.Simple, nil
	}
	m, err := pgbench.ParseQueryMode(s.Script.QueryMode)
	if err != nil {
		return "", spec.Invalidf("--query-mode: %v", err)
	}
	if m == pgbench.Extended && s.Engine != "" && !engine.InfoOf(s.Engine).ExtendedQuery {
		return "", spec.Invalidf("--query-mode extended is PostgreSQL's extended query protocol (a statement parsed at every execution); %s has none: use simple (text) or prepared (server-side prepared statements)", s.Engine)
	}
	return m, nil
}

// sqlWorkload is --workload sql: one file of plain SQL.
func sqlWorkload(sc spec.Script, mode pgbench.QueryMode, read ReadFile) (workload.Meta, []result.Script, error) {
	switch {
	case len(sc.Files) > 1:
		return workload.Meta{}, nil, spec.Invalidf("--workload sql runs one file (--script given %d times); to mix files by weight, use --workload pgbench", len(sc.Files))
	case len(sc.Defines) > 0:
		return workload.Meta{}, nil, spec.Invalidf("--define sets variables of pgbench scripts; --workload sql sends its statements as written")
	case strings.Contains(sc.Files[0], "@"):
		return workload.Meta{}, nil, spec.Invalidf("--script %s: --workload sql takes no @weight (it runs one file)", sc.Files[0])
	}
	path := sc.Files[0]
	text, err := read(path)
	if err != nil {
		return workload.Meta{}, nil, spec.Invalidf("--script: %v", err)
	}
	script, err := pgbench.ParseSQLFile(path, string(text))
	if err != nil {
		return workload.Meta{}, nil, spec.InvalidError{Err: err}
	}
	return pgbench.SQLMeta(script, sc.Dataset, mode), []result.Script{{Path: path, SHA256: checksum(text), Weight: 1}}, nil
}

// loaded is a script with its weight and checksum.
type loaded struct {
	pgbench.Weighted
	sum string
}

// loadScript reads one --script value as pgbench reads -f FILE[@W] and
// -b NAME[@W]: the weight follows the last '@' (default 1); a name that
// is no file is a built-in, by its name or a prefix of one name only.
func loadScript(arg string, read ReadFile) (loaded, error) {
	name, weight := arg, 1
	if i := strings.LastIndexByte(arg, '@'); i >= 0 {
		name = arg[:i]
		w, err := strconv.ParseInt(arg[i+1:], 10, 64)
		if err != nil || arg[i+1] == '-' || arg[i+1] == '+' {
			return loaded{}, spec.Invalidf("--script %s: invalid weight %q, want a whole number from 0 to %d after the last @", arg, arg[i+1:], math.MaxInt32)
		}
		if w > math.MaxInt32 {
			return loaded{}, spec.Invalidf("--script %s: weight out of range (0 .. %d)", arg, math.MaxInt32)
		}
		weight = int(w)
	}
	text, err := read(name)
	var script *pgbench.Script
	switch {
	case err == nil:
		script, err = pgbench.ParseScript(name, string(text))
		if err != nil {
			return loaded{}, spec.InvalidError{Err: err}
		}
	case errors.Is(err, os.ErrNotExist):
		builtin, ok := findBuiltin(strings.TrimPrefix(name, "builtin:"))
		if !ok {
			return loaded{}, spec.Invalidf("--script %s: no such file, and not a built-in script (%s)", name, builtinNames())
		}
		text = []byte(pgbench.Builtins[builtin])
		if script, err = pgbench.Builtin(builtin); err != nil {
			return loaded{}, err // the built-ins parse: a test says so
		}
	default:
		return loaded{}, spec.Invalidf("--script: %v", err)
	}
	return loaded{Weighted: pgbench.Weighted{Script: script, Weight: weight}, sum: checksum(text)}, nil
}

// findBuiltin is the built-in called name, or the only one name begins
// (pgbench -b si is simple-update).
func findBuiltin(name string) (string, bool) {
	if _, ok := pgbench.Builtins[name]; ok {
		return name, true
	}
	found := ""
	for b := range pgbench.Builtins {
		if name != "" && strings.HasPrefix(b, name) {
			if found != "" {
				return "", false
			}
			found = b
		}
	}
	return found, found != ""
}

func builtinNames() string {
	var names []string
	for n := range pgbench.Builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func checksum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// checkScriptFlags refuses --script, --define and --dataset for a
// workload that does not take them.
func checkScriptFlags(s spec.Spec) error {
	if s.Workload == "pgbench" || s.Workload == "sql" {
		return nil
	}
	for _, name := range scriptFlags {
		if s.IsChosen(name) {
			return spec.Invalidf("--%s is for --workload pgbench or sql, not %s", name, s.Workload)
		}
	}
	return nil
}

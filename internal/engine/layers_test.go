package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/obsbench/obsbench/"

// The contract is at the bottom: the engine packages, and everything they
// import, reach neither the experiment runner nor the command's spec, so
// that the runner uses the engines and never the other way round.
func TestEnginesImportNeitherRunnerNorSpec(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]bool{module + "internal/experiment": true, module + "internal/spec": true}
	var engines []string
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() != "testdata" {
			engines = append(engines, module+filepath.ToSlash(filepath.Join("internal/engine", path)))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range engines {
		if via := reaches(t, root, pkg, forbidden, map[string]bool{}); via != nil {
			t.Errorf("%s imports %s", pkg, strings.Join(via, " -> "))
		}
	}
	if via := reaches(t, root, module+"internal/experiment", map[string]bool{module + "internal/engine": true}, map[string]bool{}); via == nil {
		t.Error("internal/experiment does not import internal/engine: the runner must use the engines' contract, not a copy of it")
	}
}

// reaches returns the import path from pkg to a forbidden package, among
// pkg's non-test files and the module's packages they import; nil if
// none.
func reaches(t *testing.T, root, pkg string, forbidden, seen map[string]bool) []string {
	t.Helper()
	if seen[pkg] {
		return nil
	}
	seen[pkg] = true
	dir := filepath.Join(root, strings.TrimPrefix(pkg, module))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if forbidden[path] {
				return []string{path}
			}
			if strings.HasPrefix(path, module) {
				if via := reaches(t, root, path, forbidden, seen); via != nil {
					return append([]string{path}, via...)
				}
			}
		}
	}
	return nil
}

// Engines know no option names: the command's flags (those its help
// lists) appear in no string of an engine package's non-test code. An
// engine's refusal is a typed error the command words with its flag
// (spec.FromEngine), and a log reader's hint names a read option through
// capture.Flag.
func TestEnginesNameNoFlag(t *testing.T) {
	helps, err := filepath.Glob("../../cmd/obsbench/testdata/help/*.txt")
	if err != nil || len(helps) == 0 {
		t.Fatalf("no help pages to read the flags from (%v)", err)
	}
	flags := map[string]bool{}
	for _, h := range helps {
		b, err := os.ReadFile(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f, ok := strings.CutPrefix(strings.TrimSpace(line), "--"); ok && strings.HasPrefix(line, "  --") {
				flags["--"+strings.Fields(f)[0]] = true
			}
		}
	}
	if !flags["--dsn"] || !flags["--engine"] {
		t.Fatalf("read %d flags from the help pages, without --dsn or --engine: the pages' layout changed", len(flags))
	}
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(filepath.Dir(path), "test") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			for _, w := range strings.FieldsFunc(lit.Value, func(r rune) bool { return r != '-' && (r < 'a' || r > 'z') }) {
				if flags[w] {
					t.Errorf("%s: %s names the flag %s", path, lit.Value, w)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The package stays a hub to read in a sitting: no function longer than
// a screenful, and about 2,000 lines beside its tests. Work that grows
// it belongs in a package of its own, as capture, calibrate and countrun
// are.
func TestHubStaysSmall(t *testing.T) {
	const maxFuncLines, maxLines = 80, 2100
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	lines, read := 0, 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		read++
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(src), "\n")
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines; want at most %d", fset.Position(fn.Pos()), fn.Name.Name, n, maxFuncLines)
			}
		}
	}
	if lines > maxLines {
		t.Errorf("internal/app is %d lines beside its tests; want at most %d", lines, maxLines)
	}
	t.Logf("internal/app: %d lines in %d files", lines, read)
}

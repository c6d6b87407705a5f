// Command funclen fails when a function in the repository's non-test Go
// code is longer than a screenful (80 lines, its signature and closing
// brace included): a function that long does several things, and each
// is easier to read, test and name as a step of its own. scripts/lint.sh
// runs it over the whole tree; generated files and testdata are left out.
//
//	go run ./scripts/funclen [dir]
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const maxLines = 80

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	long, err := longFuncs(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	for _, l := range long {
		fmt.Println(l)
	}
	if len(long) > 0 {
		fmt.Printf("%d function(s) over %d lines: split each into named steps\n", len(long), maxLines)
		os.Exit(1)
	}
}

// longFuncs lists every function over maxLines in the non-test Go files
// under root, as "file:line: name is N lines".
func longFuncs(root string) ([]string, error) {
	var long []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated(src) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxLines {
				long = append(long, fmt.Sprintf("%s: %s is %d lines; want at most %d", fset.Position(fn.Pos()), name(fn), n, maxLines))
			}
		}
		return nil
	})
	return long, err
}

// name is fn's name, with its receiver's type for a method.
func name(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// generated says src carries Go's marker of generated code.
func generated(src []byte) bool {
	for line := range bytes.Lines(src) {
		if bytes.HasPrefix(line, []byte("package ")) {
			return false
		}
		if bytes.HasPrefix(line, []byte("// Code generated ")) && bytes.HasSuffix(bytes.TrimSpace(line), []byte(" DO NOT EDIT.")) {
			return true
		}
	}
	return false
}

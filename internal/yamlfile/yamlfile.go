// Package yamlfile holds what obsbench's YAML files (observer catalogs,
// studies) share: errors that say file:line:column, and the positions of
// the nodes they point at.
package yamlfile

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// SyntaxError is a problem in a file, with where it is.
type SyntaxError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// At is a SyntaxError at n's position in file.
func At(file string, n ast.Node, format string, args ...any) *SyntaxError {
	line, col := Position(n)
	return &SyntaxError{File: file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// FromYAML turns the YAML library's error into a SyntaxError at the token
// it names.
func FromYAML(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		p := ye.GetToken().Position
		return &SyntaxError{File: file, Line: p.Line, Column: p.Column, Msg: ye.GetMessage()}
	}
	return &SyntaxError{File: file, Line: 1, Column: 1, Msg: err.Error()}
}

// Position is where n is: its token's line and column, or 1:1.
func Position(n ast.Node) (int, int) {
	if n == nil {
		return 1, 1
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line, tk.Position.Column
	}
	return 1, 1
}

// EntryPosition is where a list entry starts: its first key, not the
// mapping's first ':' that the parser records as its token.
func EntryPosition(n ast.Node) (int, int) {
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 {
		return Position(m.Values[0].Key)
	}
	if mv, ok := n.(*ast.MappingValueNode); ok {
		return Position(mv.Key)
	}
	return Position(n)
}

// Field finds the key called field in a mapping node.
func Field(n ast.Node, field string) (*ast.MappingValueNode, bool) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		if mv, isValue := n.(*ast.MappingValueNode); isValue {
			m = &ast.MappingNode{Values: []*ast.MappingValueNode{mv}}
		} else {
			return nil, false
		}
	}
	for _, v := range m.Values {
		if v.Key.String() == field {
			return v, true
		}
	}
	return nil, false
}

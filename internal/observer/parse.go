package observer

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// SyntaxError is a problem in an observer file, with where it is.
type SyntaxError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// Parse reads observers from YAML: a list of entries with the fields of
// Observer. Unknown fields, wrong types and invalid values are errors that
// point at the offending line and column of file. engines, if any, are
// the engines an entry may name.
func Parse(file string, data []byte, engines ...string) ([]Observer, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, fromYAML(file, err)
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, &SyntaxError{File: file, Line: 1, Column: 1, Msg: "expected one YAML document: a list of observers"}
	}
	seq, ok := f.Docs[0].Body.(*ast.SequenceNode)
	if !ok {
		line, col := position(f.Docs[0].Body)
		return nil, &SyntaxError{File: file, Line: line, Column: col, Msg: "expected a list of observers (each starting with '- name: ...')"}
	}
	var out []Observer
	seen := map[string]string{}
	for _, node := range seq.Values {
		var o Observer
		if err := yaml.NodeToValue(node, &o, yaml.DisallowUnknownField()); err != nil {
			return nil, fromYAML(file, err)
		}
		line, col := entryPosition(node)
		o.Source = fmt.Sprintf("%s:%d", file, line)
		if field, err := validate(o, engines); err != nil {
			if fl, fc, ok := fieldPosition(node, field); ok {
				line, col = fl, fc
			}
			return nil, &SyntaxError{File: file, Line: line, Column: col, Msg: err.Error()}
		}
		key := o.Engine + "/" + o.Name
		if prev, dup := seen[key]; dup {
			return nil, &SyntaxError{File: file, Line: line, Column: col, Msg: fmt.Sprintf("observer %q for %s is defined twice (first at %s)", o.Name, o.Engine, prev)}
		}
		seen[key] = o.Source
		out = append(out, o)
	}
	return out, nil
}

// fromYAML turns the YAML library's error into a SyntaxError at the token it
// names.
func fromYAML(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		p := ye.GetToken().Position
		return &SyntaxError{File: file, Line: p.Line, Column: p.Column, Msg: ye.GetMessage()}
	}
	return &SyntaxError{File: file, Line: 1, Column: 1, Msg: err.Error()}
}

func position(n ast.Node) (int, int) {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line, tk.Position.Column
	}
	return 1, 1
}

// entryPosition is where a list entry starts: its first key, not the
// mapping's first ':' that the parser records as its token.
func entryPosition(n ast.Node) (int, int) {
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 {
		return position(m.Values[0].Key)
	}
	if mv, ok := n.(*ast.MappingValueNode); ok {
		return position(mv.Key)
	}
	return position(n)
}

// fieldPosition finds the key called field in a mapping node.
func fieldPosition(n ast.Node, field string) (int, int, bool) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		if mv, isValue := n.(*ast.MappingValueNode); isValue {
			m = &ast.MappingNode{Values: []*ast.MappingValueNode{mv}}
		} else {
			return 0, 0, false
		}
	}
	for _, v := range m.Values {
		if v.Key.String() == field {
			l, c := position(v.Key)
			return l, c, true
		}
	}
	return 0, 0, false
}

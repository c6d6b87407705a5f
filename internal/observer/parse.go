package observer

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/obsbench/obsbench/internal/yamlfile"
)

// SyntaxError is a problem in an observer file, with where it is.
type SyntaxError = yamlfile.SyntaxError

// Parse reads observers from YAML: a list of entries with the fields of
// Observer and the sections of their engine (Observer.Objects). Unknown fields, wrong types and invalid values are errors that
// point at the offending line and column of file. engines, if any, are
// the engines an entry may name.
func Parse(file string, data []byte, engines ...string) ([]Observer, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlfile.FromYAML(file, err)
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, &SyntaxError{File: file, Line: 1, Column: 1, Msg: "expected one YAML document: a list of observers"}
	}
	seq, ok := f.Docs[0].Body.(*ast.SequenceNode)
	if !ok {
		return nil, yamlfile.At(file, f.Docs[0].Body, "expected a list of observers (each starting with '- name: ...')")
	}
	var out []Observer
	seen := map[string]string{}
	for _, node := range seq.Values {
		o, err := decodeEntry(node)
		if err != nil {
			return nil, yamlfile.FromYAML(file, err)
		}
		line, col := yamlfile.EntryPosition(node)
		o.Source = fmt.Sprintf("%s:%d", file, line)
		if field, err := validate(o, engines); err != nil {
			if kv, ok := yamlfile.Field(node, field); ok {
				return nil, yamlfile.At(file, kv.Key, "%s", err)
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

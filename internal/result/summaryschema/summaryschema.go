// Package summaryschema holds the JSON Schema of summary.json
// (summary.schema.json, versioned with result.SummaryVersion) and checks
// summaries against it. Tests validate the summaries real runs, studies
// and sweeps write; tools that read summary.json can use the file.
package summaryschema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed summary.schema.json
var Schema []byte

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("summary.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("summary.schema.json")
})

// Validate checks a summary.json's bytes against the schema.
func Validate(summary []byte) error {
	sch, err := compiled()
	if err != nil {
		return fmt.Errorf("compile the schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(summary))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// Keys lists every property name the schema defines, at any depth: what
// a summary may hold.
func Keys() ([]string, error) {
	var doc any
	if err := json.Unmarshal(Schema, &doc); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var walk func(any)
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			if props, ok := n["properties"].(map[string]any); ok {
				for k := range props {
					seen[k] = true
				}
			}
			for _, v := range n {
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		}
	}
	walk(doc)
	var keys []string
	for k := range seen {
		keys = append(keys, k)
	}
	return keys, nil
}

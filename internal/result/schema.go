package result

// summary.json has a JSON Schema (summary.schema.json, versioned with
// SummaryVersion), and summaries are checked against it: tests validate
// the summaries real runs, studies and sweeps write; tools that read
// summary.json can use the file.

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SummarySchema is summary.json's JSON Schema.
//
//go:embed summary.schema.json
var SummarySchema []byte

var compiledSummarySchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SummarySchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("summary.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("summary.schema.json")
})

// ValidateSummary checks a summary.json's bytes against the schema.
func ValidateSummary(summary []byte) error {
	sch, err := compiledSummarySchema()
	if err != nil {
		return fmt.Errorf("compile the schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(summary))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// SummaryKeys lists every property name the schema defines, at any depth: what
// a summary may hold.
func SummaryKeys() ([]string, error) {
	var doc any
	if err := json.Unmarshal(SummarySchema, &doc); err != nil {
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

package observer_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/obsbench/obsbench/internal/observer"
)

// probe is an engine-owned object of a test engine, "sectioned".
type probe struct {
	Level int `yaml:"level" json:"level"`
}

func (p *probe) Check() error {
	if p.Level <= 0 {
		return errors.New("level must be positive")
	}
	return nil
}

func (p *probe) Summary() string { return fmt.Sprintf("probe at level %d", p.Level) }

var registerSectioned = sync.OnceFunc(func() {
	observer.RegisterEngine("sectioned", observer.EngineRules{Sections: []observer.Section{
		{Key: "probe", Label: "probe: (a probe)", EventsSource: true, New: func() observer.Object { return new(probe) }},
	}})
})

// An engine's section is decoded into the engine's type, checked and
// summarized by it, and written to JSON under its key.
func TestEngineSection(t *testing.T) {
	registerSectioned()
	obs, err := observer.Parse("f.yaml", []byte("- name: x\n  engine: sectioned\n  description: d\n  probe: {level: 2}\n  events: {source: probe, volume: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := obs[0].Objects["probe"].(*probe)
	if !ok || p.Level != 2 {
		t.Fatalf("objects = %+v; want the probe at level 2", obs[0].Objects)
	}
	if got := obs[0].Summary(); got != "probe at level 2" {
		t.Errorf("Summary = %q", got)
	}
	b, _ := json.Marshal(obs[0])
	want := `{"name":"x","engine":"sectioned","description":"d","probe":{"level":2},"events":{"source":"probe","volume":true},"source":"f.yaml:1"}`
	if string(b) != want {
		t.Errorf("JSON = %s; want %s", b, want)
	}
	var back observer.Observer
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if p, ok := back.Objects["probe"].(*probe); !ok || p.Level != 2 {
		t.Errorf("JSON read back objects = %+v", back.Objects)
	}
}

// A bad section, or one on another engine's entry, is reported at its
// line; a key that is no engine's section is an unknown field, unless the
// entry's engine is not in this binary: then it is kept unread.
func TestEngineSectionErrors(t *testing.T) {
	registerSectioned()
	head := "- name: x\n  engine: sectioned\n  description: d\n"
	tests := []struct{ name, yaml, want string }{
		{"check", head + "  probe: {level: 0}\n", "f.yaml:4:3: level must be positive"},
		{"unknown field", head + "  probe: {levels: 1}\n", "f.yaml:4:11: unknown field \"levels\""},
		{"settings", head + "  probe: {level: 1}\n  settings: {a: b}\n", "f.yaml:5:3: a sectioned observer is an probe: entry"},
		{"other engine", "- name: x\n  engine: postgres\n  description: d\n  probe: {level: 1}\n", "f.yaml:4:3: probe: (a probe) is for engine sectioned"},
		{"other engine's source", "- name: x\n  engine: postgres\n  description: d\n  events: {source: probe}\n", "f.yaml:4:3: events source probe is for engine sectioned"},
		{"nobody's section", "- name: x\n  engine: postgres\n  description: d\n  mystery: {a: 1}\n", "f.yaml:4:3: unknown field \"mystery\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := observer.Parse("f.yaml", []byte(tt.yaml))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Parse = %v; want prefix %q", err, tt.want)
			}
		})
	}
	obs, err := observer.Parse("f.yaml", []byte("- name: x\n  engine: elsewhere\n  description: d\n  mystery: {a: 1}\n  events: {source: mystery}\n"))
	if err != nil {
		t.Fatalf("an entry of an engine this binary lacks: %v", err)
	}
	if b, _ := json.Marshal(obs[0]); !strings.Contains(string(b), `"mystery":{"a":1}`) {
		t.Errorf("JSON = %s; want the unread section as written", b)
	}
}

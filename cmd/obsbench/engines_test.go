package main

import (
	"slices"
	"testing"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
)

// The built-in catalog has observers for exactly the engines the binary
// registers: the catalog keeps entries of any engine, and checks a
// user's file against the registry.
func TestCatalogEnginesRegistered(t *testing.T) {
	cat, err := observer.Builtin(engine.Names()...)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cat.Engines(), engine.Names(); !slices.Equal(got, want) {
		t.Errorf("the built-in catalog has observers for %v; the binary registers %v", got, want)
	}
}

// Every registered engine says which SQL dialect it speaks: workloads are
// matched to engines by it.
func TestEnginesSpeakADialect(t *testing.T) {
	for _, name := range engine.Names() {
		if engine.InfoOf(name).Dialect == "" {
			t.Errorf("engine %s: no Info.Dialect", name)
		}
	}
}

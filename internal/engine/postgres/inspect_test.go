package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// Inspect finds exactly the catalog observers in force, and lists their
// settings, libraries and extensions.
func TestInspectReportsEnabledObservers(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	cat := servertest.Catalog(t)
	all := cat.All("postgres")
	in, err := s.Inspect(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Observers) != 0 {
		t.Fatalf("a fresh server has observers %v; want none", in.Observers)
	}
	enabled := []string{"log-statements-file", "pg-stat-statements", "pgaudit-read"}
	for _, name := range enabled {
		o, err := cat.Lookup("postgres", name)
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.Apply(ctx, o)
		if err != nil {
			t.Fatalf("Apply %s: %v", name, err)
		}
		defer func() {
			if err := a.Revert(ctx); err != nil {
				t.Errorf("Revert %s: %v", name, err)
			}
		}()
	}
	in, err = s.Inspect(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(in.Observers, enabled) {
		t.Errorf("observers %v; want exactly %v", in.Observers, enabled)
	}
	var names []string
	for _, st := range in.Settings {
		names = append(names, st.Name+"="+st.Value)
	}
	for _, want := range []string{"log_statement=all", "logging_collector=on", "pgaudit.log=read", "pg_stat_statements.track=all"} {
		if !slices.Contains(names, want) {
			t.Errorf("settings %v lack %s", names, want)
		}
	}
	if !slices.Contains(in.Preload, "pgaudit") || !slices.Contains(in.Preload, "pg_stat_statements") {
		t.Errorf("preload %v; want pgaudit and pg_stat_statements", in.Preload)
	}
	if len(in.Extensions) != 1 || !strings.HasPrefix(in.Extensions[0], "pg_stat_statements ") {
		t.Errorf("extensions %v; want pg_stat_statements", in.Extensions)
	}
	if len(in.Processes) != 1 || !strings.HasPrefix(in.Processes[0], "logging collector") {
		t.Errorf("processes %v; want the logging collector", in.Processes)
	}
}

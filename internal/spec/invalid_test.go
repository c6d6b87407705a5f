package spec

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
)

func TestOneOf(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"a", "b", "c"}, "a, b or c"},
	} {
		if got := OneOf(tc.in); got != tc.want {
			t.Errorf("OneOf(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// An engine's refusals name no option; FromEngine adds the one they came
// from, and keeps a refusal's type for callers that branch on it (an
// unknown engine becomes a usage error).
func TestFromEngineNamesTheOption(t *testing.T) {
	restart := &engine.RestartError{Observer: "pg-stat-statements", Settings: []string{"shared_preload_libraries"}, Needs: "takes a restart"}
	sink := &engine.SinkError{Observer: "log-slow", Sink: observer.Sink{Kind: observer.SinkSlowDir}}
	for _, c := range []struct {
		err  error
		flag string
		want string
		as   any
	}{
		{restart, "--dsn", "(run without --dsn)", new(*engine.RestartError)},
		{fmt.Errorf("check: %w", sink), "--twin-dsn", "(run without --twin-dsn)", new(*engine.SinkError)},
		{&engine.UnknownError{Name: "oracle", Known: []string{"mariadb", "postgres"}}, "--dsn", `--engine "oracle" is not supported; valid: mariadb, postgres`, nil},
		{&engine.SinkError{Observer: "x", Sink: observer.Sink{Kind: observer.SinkStream}, Unsupported: "MariaDB"}, "--dsn", "has no analogue of", new(*engine.SinkError)},
	} {
		got := FromEngine(c.err, c.flag)
		if !strings.Contains(got.Error(), c.want) {
			t.Errorf("FromEngine(%v, %s) = %q; want it to say %q", c.err, c.flag, got, c.want)
		}
		if strings.Contains(c.err.Error(), "--") {
			t.Errorf("the engine's own error %q names an option", c.err)
		}
		if c.as != nil && !errors.As(got, c.as) {
			t.Errorf("FromEngine(%v) = %T; want the engine's error kept", c.err, got)
		}
	}
	if FromEngine(nil, "--dsn") != nil {
		t.Error("FromEngine(nil) is not nil")
	}
}

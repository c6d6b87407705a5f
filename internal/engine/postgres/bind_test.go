package postgres

import (
	"bytes"
	"fmt"
	"testing"
)

// The Bind message built in place is the one bind builds from the
// arguments' fmt.Sprint text, for every kind of argument the workloads
// pass, and a reused buffer leaves no trace of the previous execution.
func TestMessageIsBindOfTheArgumentsText(t *testing.T) {
	st := &stmt{name: "obsbench_7", noArgs: bind("obsbench_7", nil)}
	for _, args := range [][]any{
		{"4711"},
		{"a longer text argument than the first", nil, int64(-12)},
		{42, true, 3.25, uint8(7), []byte("ab")},
		{"x"},
		{nil},
	} {
		params := make([][]byte, len(args))
		for i, a := range args {
			if a != nil {
				params[i] = []byte(fmt.Sprint(a))
			}
		}
		want := bind(st.name, params)
		if got := st.message(args); !bytes.Equal(got, want) {
			t.Errorf("message(%v)\n got %q\nwant %q", args, got, want)
		}
	}
	if got := st.message(nil); !bytes.Equal(got, st.noArgs) {
		t.Errorf("message() = %q, want the statement's execution without arguments", got)
	}
}

// The Bind message of tpcb-like's UPDATE (three arguments): built in place
// (message) against built from fmt.Sprint's text (bind, what message did
// before). go test -run - -bench Bind -benchmem ./internal/engine/postgres
func BenchmarkBind(b *testing.B) {
	st := &stmt{name: "obsbench_3"}
	args := []any{"-2713", "172931", "3"}
	b.Run("in-place", func(b *testing.B) {
		for b.Loop() {
			st.message(args)
		}
	})
	b.Run("sprint", func(b *testing.B) {
		for b.Loop() {
			params := make([][]byte, len(args))
			for i, a := range args {
				params[i] = []byte(fmt.Sprint(a))
			}
			bind(st.name, params)
		}
	})
}

package postgres

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// bind is the former encoding of an execution, the reference here: Bind
// (text parameters, text results), Describe of the portal, Execute and
// Sync, the messages libpq sends for PQexecPrepared.
func bind(name string, params [][]byte) []byte {
	b := cstring(cstring(nil, ""), name)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(len(params)))
	for _, p := range params {
		if p == nil {
			b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	b = binary.BigEndian.AppendUint16(b, 0)
	msg := message(nil, 'B', b)
	msg = message(msg, 'D', []byte{'P', 0})
	msg = message(msg, 'E', []byte{0, 0, 0, 0, 0})
	return message(msg, 'S')
}

// The Bind message built in place is the one bind builds from the
// arguments' fmt.Sprint text, for every kind of argument the workloads
// pass, and a reused buffer leaves no trace of the previous execution.
func TestMessageIsBindOfTheArgumentsText(t *testing.T) {
	st := &stmt{name: "obsbench_7", noArgs: execution(nil, "obsbench_7", nil)}
	if want := bind(st.name, nil); !bytes.Equal(st.noArgs, want) {
		t.Errorf("the execution without arguments\n got %q\nwant %q", st.noArgs, want)
	}
	// Appended after other bytes, the message's length counts its own.
	if got, want := execution([]byte("prefix"), st.name, []any{"1"}), append([]byte("prefix"), bind(st.name, [][]byte{[]byte("1")})...); !bytes.Equal(got, want) {
		t.Errorf("execution after a prefix\n got %q\nwant %q", got, want)
	}
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

package postgres

import (
	"errors"
	"testing"
	"time"
)

// A backend is this machine's only when a local process of its id is
// postgres and began when the server says: a process of another name, a
// start seconds apart (the same id reused, or another machine's) or no
// such process say no.
func TestBackendHere(t *testing.T) {
	began := time.Unix(1_700_000_000, 0)
	for _, tt := range []struct {
		name string
		comm string
		at   time.Time
		err  error
		want bool
	}{
		{"the backend", "postgres", began.Add(400 * time.Millisecond), nil, true},
		{"the backend, /proc's start a second early", "postgres", began.Add(-time.Second), nil, true},
		{"another process of that id", "bash", began, nil, false},
		{"a postgres process started later", "postgres", began.Add(time.Hour), nil, false},
		{"no such process", "", time.Time{}, errors.New("no such file"), false},
	} {
		got := backendHere(42, began, func(pid int) (string, time.Time, error) {
			if pid != 42 {
				t.Fatalf("read process %d; want 42", pid)
			}
			return tt.comm, tt.at, tt.err
		})
		if got != tt.want {
			t.Errorf("%s: %v; want %v", tt.name, got, tt.want)
		}
	}
}

package mariadb

import (
	"errors"
	"testing"
	"time"
)

// A server's threads are this machine's only when the process a thread
// belongs to is mariadbd (or mysqld) and started when the server's
// uptime says: another process, a start far off, no such process or no
// thread group say no.
func TestServerHere(t *testing.T) {
	began := time.Unix(1_700_000_000, 0)
	for _, tt := range []struct {
		name string
		pid  int
		comm string
		at   time.Time
		err  error
		want bool
	}{
		{"the server", 7, "mariadbd", began.Add(1500 * time.Millisecond), nil, true},
		{"the server, as mysqld", 7, "mysqld", began.Add(-2 * time.Second), nil, true},
		{"another process", 7, "postgres", began, nil, false},
		{"a mariadbd started later", 7, "mariadbd", began.Add(time.Minute), nil, false},
		{"no such process", 7, "", time.Time{}, errors.New("no such file"), false},
		{"no thread group", 0, "mariadbd", began, nil, false},
	} {
		got := serverHere(tt.pid, began, func(int) (string, time.Time, error) { return tt.comm, tt.at, tt.err })
		if got != tt.want {
			t.Errorf("%s: %v; want %v", tt.name, got, tt.want)
		}
	}
}

package observer

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Poller is a monitoring agent as an observer: sessions of its own that
// send its queries every interval, as postgres_exporter, pganalyze or
// PMM poll the statistics views. It runs against the server the observer
// is on, from Apply to Revert; the server CPU its queries take is the
// observer's cost, spread over the workload's statements.
type Poller struct {
	// Interval is the time between the starts of two polls ("15s").
	Interval string `yaml:"interval" json:"interval"`
	// Sessions is how many connections poll, each sending every query at
	// each poll (default 1).
	Sessions int `yaml:"sessions" json:"sessions,omitempty"`
	// Queries are the agent's statements, each sent as text and its rows
	// read to the end.
	Queries []string `yaml:"queries" json:"queries"`
}

// Every is Interval as a duration.
func (p Poller) Every() (time.Duration, error) {
	d, err := time.ParseDuration(p.Interval)
	if err != nil || d < 10*time.Millisecond || d > time.Hour {
		return 0, fmt.Errorf("poller interval %q: want a duration from 10ms to 1h, e.g. 15s", p.Interval)
	}
	return d, nil
}

// Conns is Sessions, 1 when not set.
func (p Poller) Conns() int { return max(1, p.Sessions) }

// String describes the poller in a few words.
func (p Poller) String() string {
	return fmt.Sprintf("%d queries every %s in %d session(s)", len(p.Queries), p.Interval, p.Conns())
}

func validatePoller(p Poller) error {
	if _, err := p.Every(); err != nil {
		return err
	}
	if p.Sessions < 0 || p.Sessions > 64 {
		return fmt.Errorf("poller sessions %d: want 1 to 64", p.Sessions)
	}
	if len(p.Queries) == 0 {
		return errors.New("poller queries: want the agent's statements, one item each")
	}
	for i, q := range p.Queries {
		if strings.TrimSpace(q) == "" {
			return fmt.Errorf("poller query %d is empty", i+1)
		}
	}
	return nil
}

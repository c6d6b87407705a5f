package observer

import (
	"errors"
	"fmt"
	"regexp"
)

// Consumer is a process obsbench runs beside a managed server for the
// observer, reading what the server makes for it: change data capture's
// reader of a logical replication slot (as Debezium's or a pipeline's).
// It starts once the observer's settings are in force and stops, its slot
// dropped, before they are reverted.
type Consumer struct {
	// Plugin is the logical decoding output plugin the slot decodes with
	// (wal2json, test_decoding).
	Plugin string `yaml:"plugin" json:"plugin"`
	// Rate is how fast the consumer takes the decoded stream, in bytes per
	// second with an optional KiB or MiB suffix; empty: as fast as it
	// can. A slow consumer holds the slot back, and the server keeps the
	// WAL it has not confirmed.
	Rate string `yaml:"rate" json:"rate,omitempty"`
}

// RateBytes is Rate in bytes per second, 0 for as fast as it can.
func (c Consumer) RateBytes() (int64, error) {
	n, err := parseBytes(c.Rate)
	if err != nil {
		return 0, fmt.Errorf("consumer rate %q: want a positive number of bytes per second, e.g. 64KiB", c.Rate)
	}
	return n, nil
}

// String describes the consumer in a few words.
func (c Consumer) String() string {
	out := "logical decoding (" + c.Plugin + ") read by a consumer"
	if c.Rate != "" {
		out += " at " + c.Rate + "/s"
	}
	return out
}

var pluginRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func validateConsumer(c Consumer) error {
	if !pluginRE.MatchString(c.Plugin) {
		return errors.New("consumer plugin: want an output plugin's name, e.g. wal2json or test_decoding")
	}
	_, err := c.RateBytes()
	return err
}

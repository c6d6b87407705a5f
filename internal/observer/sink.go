package observer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sink kinds.
const (
	// SinkStream sends the server's log to obsbench as a live stream: with
	// logging_collector off, every backend writes its messages into a pipe
	// that obsbench reads (the analogue of a trace streamed to a client).
	SinkStream = "stream"
	// SinkSlowDir is a directory on a slow I/O path; "{{sink_dir}}" in the
	// observer's settings stands for it (e.g. log_directory).
	SinkSlowDir = "slow-dir"
)

// SinkDirPlaceholder is replaced by a slow-dir sink's path in settings.
const SinkDirPlaceholder = "{{sink_dir}}"

// Sink says where an observer's output goes when that is not simply the
// server's own log file, and how that destination behaves. Sinks are set up
// by obsbench on a server it manages.
type Sink struct {
	Kind string `yaml:"kind" json:"kind"`
	// Rate is how fast the stream's client reads, in bytes per second with
	// an optional KiB or MiB suffix ("256KiB"); empty: as fast as it can.
	Rate string `yaml:"rate" json:"rate,omitempty"`
	// Lossy makes the server drop a message, instead of waiting, when the
	// stream is full (stream only).
	Lossy bool `yaml:"lossy" json:"lossy,omitempty"`
	// WriteDelay is how long every write into a slow-dir takes ("1ms").
	WriteDelay string `yaml:"write_delay" json:"write_delay,omitempty"`
	// Capacity makes a slow-dir a device that fills up: writes past this
	// many bytes ("1MiB") fail with "no space left on device".
	Capacity string `yaml:"capacity" json:"capacity,omitempty"`
	// Stall makes a slow-dir stop now and then, as a disk does in a
	// write-back flush or a network volume in a hiccup: "300ms every 3s",
	// the first 300 ms of every 3 s. A sink that blocks only now and then
	// barely moves a saturated server's throughput and moves the latency
	// of a server below saturation a lot.
	Stall string `yaml:"stall" json:"stall,omitempty"`
}

// SlowDevice is a slow-dir sink's behaviour, as package slowfs mounts it.
type SlowDevice struct {
	Delay             time.Duration
	Capacity          int64 // bytes; 0: unlimited
	Stall, StallEvery time.Duration
}

// RateBytes is Rate in bytes per second, 0 for unlimited.
func (s Sink) RateBytes() (int64, error) {
	n, err := parseBytes(s.Rate)
	if err != nil {
		return 0, fmt.Errorf("rate %q: want a positive number of bytes per second, e.g. 256KiB", s.Rate)
	}
	return n, nil
}

// CapacityBytes is Capacity in bytes, 0 for unlimited.
func (s Sink) CapacityBytes() (int64, error) {
	n, err := parseBytes(s.Capacity)
	if err != nil {
		return 0, fmt.Errorf("capacity %q: want a positive number of bytes, e.g. 1MiB", s.Capacity)
	}
	return n, nil
}

// parseBytes reads "256KiB", "1MiB" or a plain number of bytes; "" is 0.
func parseBytes(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	num, mult := v, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"B", 1}} {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSuffix(num, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("not a positive size")
	}
	return n * mult, nil
}

// SlowDir is a slow-dir sink's device.
func (s Sink) SlowDir() (SlowDevice, error) {
	var d SlowDevice
	var err error
	if d.Delay, err = s.Delay(); err != nil {
		return d, err
	}
	if d.Capacity, err = s.CapacityBytes(); err != nil {
		return d, err
	}
	d.Stall, d.StallEvery, err = s.stalls()
	return d, err
}

// stalls reads Stall: "300ms every 3s"; "" is none.
func (s Sink) stalls() (stall, every time.Duration, err error) {
	if s.Stall == "" {
		return 0, 0, nil
	}
	bad := fmt.Errorf("stall %q: want how long and how often, a stall shorter than its period, e.g. \"300ms every 3s\"", s.Stall)
	a, b, ok := strings.Cut(s.Stall, " every ")
	if !ok {
		return 0, 0, bad
	}
	if stall, err = time.ParseDuration(strings.TrimSpace(a)); err != nil {
		return 0, 0, bad
	}
	if every, err = time.ParseDuration(strings.TrimSpace(b)); err != nil {
		return 0, 0, bad
	}
	if stall <= 0 || stall >= every {
		return 0, 0, bad
	}
	return stall, every, nil
}

// Delay is WriteDelay as a duration.
func (s Sink) Delay() (time.Duration, error) {
	d, err := time.ParseDuration(s.WriteDelay)
	if err != nil || d <= 0 || d > time.Second {
		return 0, fmt.Errorf("write_delay %q: want a duration from 1us to 1s, e.g. 1ms", s.WriteDelay)
	}
	return d, nil
}

// String describes the sink in a few words.
func (s Sink) String() string {
	switch s.Kind {
	case SinkStream:
		out := "log stream to obsbench"
		if s.Rate != "" {
			out += " read at " + s.Rate + "/s"
		}
		if s.Lossy {
			out += ", lossy"
		}
		return out
	case SinkSlowDir:
		out := "slow directory, " + s.WriteDelay + " per write"
		if s.Capacity != "" {
			out += ", full at " + s.Capacity
		}
		if s.Stall != "" {
			out += ", stalls " + s.Stall
		}
		return out
	}
	return s.Kind
}

func validateSink(o Observer) error {
	s := o.Sink
	switch s.Kind {
	case SinkStream:
		if s.WriteDelay != "" || s.Capacity != "" || s.Stall != "" {
			return errors.New("sink write_delay, capacity and stall are for kind slow-dir; a stream is slowed with its rate")
		}
		_, err := s.RateBytes()
		return err
	case SinkSlowDir:
		if s.Rate != "" || s.Lossy {
			return errors.New("sink rate and lossy are for kind stream")
		}
		if _, err := s.SlowDir(); err != nil {
			return err
		}
		for _, v := range o.Settings {
			if strings.Contains(v, SinkDirPlaceholder) {
				return nil
			}
		}
		return fmt.Errorf("a slow-dir sink needs a setting that uses %s (e.g. log_directory: '%s')", SinkDirPlaceholder, SinkDirPlaceholder)
	}
	return fmt.Errorf("sink kind %q is not one of %s, %s", s.Kind, SinkStream, SinkSlowDir)
}

// WithSinkDir returns o with SinkDirPlaceholder in its settings replaced
// by dir, the slow directory a host provides.
func (o Observer) WithSinkDir(dir string) Observer {
	if o.Settings == nil {
		return o
	}
	settings := make(map[string]string, len(o.Settings))
	for k, v := range o.Settings {
		settings[k] = strings.ReplaceAll(v, SinkDirPlaceholder, dir)
	}
	o.Settings = settings
	return o
}

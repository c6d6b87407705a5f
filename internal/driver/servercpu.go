package driver

import (
	"fmt"
	"time"
)

// serverCPU reads the server CPU of a run's sessions as the measured
// window opens and closes (Config.ServerCPU), from the sessions that are
// ServerClocks.
type serverCPU struct {
	clocks      []ServerClock
	opened, end []time.Duration
	err         error
}

// newServerCPU opens every session's clock before the run starts, so
// that the window's reads only read.
func newServerCPU(cfg Config, sessions []Session) *serverCPU {
	c := &serverCPU{clocks: make([]ServerClock, len(sessions)), opened: make([]time.Duration, len(sessions)), end: make([]time.Duration, len(sessions))}
	for i, s := range sessions {
		clock, ok := s.(ServerClock)
		if !ok {
			c.err = fmt.Errorf("session %d cannot read its server's CPU", cfg.FirstSession+i)
			return c
		}
		if _, err := clock.ServerCPU(); err != nil {
			c.err = fmt.Errorf("session %d: %w", cfg.FirstSession+i, err)
			return c
		}
		c.clocks[i] = clock
	}
	return c
}

// read reads every clock, at the window's opening or its end.
func (c *serverCPU) read(open bool) {
	if c.err != nil {
		return
	}
	into := c.end
	if open {
		into = c.opened
	}
	for i, clock := range c.clocks {
		d, err := clock.ServerCPU()
		if err != nil {
			c.err = err
			return
		}
		into[i] = d
	}
}

// seconds is the server CPU the sessions that keep says used over the
// window, in seconds; 0 when it could not be read.
func (c *serverCPU) seconds(keep func(i int) bool) float64 {
	if c == nil || c.err != nil {
		return 0
	}
	var sum time.Duration
	for i := range c.clocks {
		if keep(i) {
			sum += c.end[i] - c.opened[i]
		}
	}
	return sum.Seconds()
}

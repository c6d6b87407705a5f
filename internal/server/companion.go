package server

import (
	"fmt"
	"time"
)

// CompanionOptions configure a managed server's companion: a PostgreSQL
// streaming standby or a MariaDB replica.
type CompanionOptions struct {
	// Sync makes the primary's commits wait for the companion: until a
	// standby has flushed their WAL (synchronous_standby_names), or a
	// replica has acknowledged their binary log events
	// (semi-synchronous replication, built into MariaDB since 10.3).
	Sync bool
	// Delay is added to each direction between primary and companion by
	// a relay of obsbench's (0: no relay).
	Delay time.Duration
	Log   func(format string, args ...any)
}

// Logf is o.Log, or a function that drops its notes.
func (o CompanionOptions) Logf() func(string, ...any) {
	if o.Log == nil {
		return func(string, ...any) {}
	}
	return o.Log
}

// Companion is what a standby and a replica share beside their server:
// the relay that delays their link, and whether the primary waits.
type Companion struct {
	relay *Relay
	sync  bool
}

// NewCompanion is a companion whose primary waits for it when sync is
// set; Link gives it its relay.
func NewCompanion(sync bool) Companion { return Companion{sync: sync} }

// Relay is the relay that delays the companion's link, nil without one.
func (c *Companion) Relay() *Relay { return c.relay }

// Sync says whether the primary's commits wait for the companion.
func (c *Companion) Sync() bool { return c.sync }

// Link is the port where the companion reaches its primary: the
// primary's own, or with a delay, that of a relay of obsbench's on
// loopback adding it each way, which only the companion's processes (OS
// user uid) may use. what names the companion in the note.
func (c *Companion) Link(primaryPort int, delay time.Duration, uid int, what string, logf func(string, ...any)) (int, error) {
	if delay <= 0 {
		return primaryPort, nil
	}
	relay, err := StartRelay(fmt.Sprintf("127.0.0.1:%d", primaryPort), delay, uid)
	if err != nil {
		return 0, err
	}
	c.relay = relay
	logf("%s connects through a relay adding %v each way (127.0.0.1:%d)", what, delay, relay.Port())
	return relay.Port(), nil
}

// ShutDown stops the companion's server, then closes its relay.
func (c *Companion) ShutDown(server interface{ Stop() error }) error {
	err := server.Stop()
	c.CloseRelay()
	return err
}

// CloseRelay closes the relay, if there is one.
func (c *Companion) CloseRelay() {
	if c.relay != nil {
		c.relay.Close()
		c.relay = nil
	}
}

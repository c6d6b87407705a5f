// Package fleet spreads a run's workload sessions over worker processes,
// on this machine or others, and merges what they ran into one result.
//
// The coordinator (obsbench run --workers N) listens; each worker
// (obsbench worker) connects, proves it was started for this experiment
// with a shared token, and receives the experiment's spec and where to
// open its sessions. For every run the coordinator measures each worker's
// clock, hands it a share of the sessions (session ids stay global), waits
// until every worker has its sessions connected and prepared, and names
// one start instant, converted to each worker's clock. Workers stream
// their live counts and send back their part of the result with its
// latency histograms, which merge without loss (driver.Merge).
//
// Workers never change the server: the coordinator applies, switches and
// reverts observers, loads datasets and counts events. A worker that loses
// its coordinator stops its sessions at once.
//
// The protocol is JSON, one message per line, over a Unix socket (local
// workers) or TCP.
package fleet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/spec"
)

// TokenEnv is the environment variable that gives a worker its
// coordinator's token (environment, not arguments: other accounts can read
// a process's arguments, not its environment).
const TokenEnv = "OBSBENCH_WORKER_TOKEN"

// Message kinds.
const (
	kindHello    = "hello"    // worker: who it is, the token
	kindAssign   = "assign"   // coordinator: the spec and the server's address
	kindAssigned = "assigned" // worker: ready for runs, or Err
	kindClock    = "clock"    // both: a clock reading
	kindRun      = "run"      // coordinator: run a share of the sessions
	kindReady    = "ready"    // worker: sessions connected and prepared
	kindStart    = "start"    // coordinator: when to start, worker's clock
	kindProgress = "progress" // worker: statements completed since last
	kindPart     = "part"     // worker: its part of the result
	kindFailed   = "failed"   // worker: the run failed (Err)
	kindStop     = "stop"     // coordinator: stop the run now
	kindPing     = "ping"     // coordinator: still here
	kindBye      = "bye"      // coordinator: the experiment is over
)

// message is one line of the protocol; Kind says which fields are set.
type message struct {
	Kind string `json:"kind"`
	// RunID numbers the run a message is about: a late message of a run
	// that was stopped is not taken for the next one's.
	RunID  int     `json:"run_id,omitempty"`
	Hello  *hello  `json:"hello,omitempty"`
	Assign *assign `json:"assign,omitempty"`
	// Clock is a clock reading in Unix nanoseconds.
	Clock    int64       `json:"clock,omitempty"`
	Run      *runRequest `json:"run,omitempty"`
	Start    int64       `json:"start,omitempty"` // Unix ns, worker's clock
	Progress int64       `json:"progress,omitempty"`
	Part     *part       `json:"part,omitempty"`
	Err      string      `json:"err,omitempty"`
}

type hello struct {
	Index int    `json:"index"`
	Token string `json:"token"`
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	CPUs  int    `json:"cpus"`
}

type assign struct {
	Spec    spec.Spec             `json:"spec"`
	Address engine.SessionAddress `json:"address"`
	Files   map[string][]byte     `json:"files,omitempty"`
}

type runRequest struct {
	FirstSession int           `json:"first_session"`
	Clients      int           `json:"clients"`
	Warmup       time.Duration `json:"warmup"`
	Duration     time.Duration `json:"duration"`
	// Procs is the driver threads of the whole run; a worker uses no
	// more than its share of the sessions suits (driver.DefaultProcs):
	// threads with few sessions each hand work between them for every
	// answer (bench/workers).
	Procs      int      `json:"procs"`
	Labels     []string `json:"labels,omitempty"`
	Executions bool     `json:"executions,omitempty"`
	// Rate is the worker's share of a fixed arrival rate (its sessions'),
	// RateSeed and LatencyLimit the run's (driver.Config).
	Rate         float64       `json:"rate,omitempty"`
	RateSeed     int64         `json:"rate_seed,omitempty"`
	LatencyLimit time.Duration `json:"latency_limit,omitempty"`
}

type part struct {
	driver.PartWire
	// CPUSeconds is the worker process's CPU over its measured window.
	CPUSeconds float64 `json:"cpu_seconds"`
}

// sendTimeout bounds one send: a peer that stops reading must not hold up
// the sender (the coordinator's pings to every other worker).
const sendTimeout = 5 * time.Second

// conn sends and receives messages; send is safe for concurrent use.
type conn struct {
	mu  sync.Mutex
	enc *json.Encoder
	dec *json.Decoder
	nc  net.Conn
}

func newConn(nc net.Conn) *conn {
	return &conn{enc: json.NewEncoder(nc), dec: json.NewDecoder(bufio.NewReader(nc)), nc: nc}
}

func (c *conn) send(m message) error { return c.sendWithin(m, sendTimeout) }

// filesTimeout bounds the send of an assignment with files: a second
// more for every MiB, a slow link's pace.
func filesTimeout(files map[string][]byte) time.Duration {
	n := 0
	for _, b := range files {
		n += len(b)
	}
	return sendTimeout + time.Duration(n>>20)*time.Second
}

// sendWithin is send with its own bound.
func (c *conn) sendWithin(m message, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(d))
	if err := c.enc.Encode(m); err != nil {
		return fmt.Errorf("send %s: %w", m.Kind, err)
	}
	return nil
}

// receive reads the next message; only one goroutine may call it.
func (c *conn) receive() (message, error) {
	var m message
	err := c.dec.Decode(&m)
	return m, err
}

func (c *conn) close() error { return c.nc.Close() }

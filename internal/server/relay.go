package server

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// Relay forwards TCP connections from a loopback port to a target,
// holding every chunk of bytes for a fixed delay in each direction: a
// network link's latency, in user space, for machines where the kernel
// cannot add it (no tc netem). Order is kept. At most relayQueue chunks
// are in flight per direction, which bounds throughput at relayQueue
// reads per delay: far above a replication stream's needs at the delays
// of a LAN or a region.
//
// A loopback port is open to every account on the machine, so the relay
// serves only connections made by one OS user, the standby's: any other
// is closed before the target is dialled (the kernel, asked through
// sock_diag(7), says whose a loopback connection is).
type Relay struct {
	ln       net.Listener
	target   string
	delay    time.Duration
	uid      int // the only OS user whose connections are relayed
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]bool
	closed   bool
	refused  int   // connections of other users, closed unserved
	unserved error // why the relay last closed a connection unserved
}

const relayQueue = 4096

// StartRelay listens on 127.0.0.1 and relays to target with delay the
// connections of OS user uid.
func StartRelay(target string, delay time.Duration, uid int) (*Relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &Relay{ln: ln, target: target, delay: delay, uid: uid, conns: map[net.Conn]bool{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Port is the port clients connect to.
func (r *Relay) Port() int { return r.ln.Addr().(*net.TCPAddr).Port }

// Refused is how many connections the relay closed because another OS
// user made them.
func (r *Relay) Refused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

// Unserved says why the relay last closed a connection without relaying
// it (another user's, one whose user could not be told, or a target that
// could not be reached); nil if it never did.
func (r *Relay) Unserved() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unserved
}

// Close stops accepting and closes every relayed connection.
func (r *Relay) Close() error {
	err := r.ln.Close()
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return err
}

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		in, err := r.ln.Accept()
		if err != nil {
			return
		}
		uid, err := peerUID(in)
		if err == nil && uid != r.uid {
			err = fmt.Errorf("made by OS user %d, not %d", uid, r.uid)
		}
		if err != nil {
			// Counted before the close that the client sees.
			r.mu.Lock()
			r.refused++
			r.unserved = fmt.Errorf("relay: connection from %v refused: %w", in.RemoteAddr(), err)
			r.mu.Unlock()
			in.Close()
			continue
		}
		out, err := net.DialTimeout("tcp", r.target, 5*time.Second)
		if err != nil {
			r.mu.Lock()
			r.unserved = fmt.Errorf("relay: connection from %v not served: %w", in.RemoteAddr(), err)
			r.mu.Unlock()
			in.Close()
			continue
		}
		r.mu.Lock()
		if r.closed { // Close ran between Accept and here
			r.mu.Unlock()
			in.Close()
			out.Close()
			return
		}
		r.conns[in], r.conns[out] = true, true
		r.mu.Unlock()
		r.wg.Add(2)
		go r.pipe(out, in)
		go r.pipe(in, out)
	}
}

// chunk is bytes read at a time, due for writing at due.
type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies src to dst, each read held until delay after it arrived.
// A reader and a writer run apart, so that the delay does not slow the
// reading: bytes in flight pile up as they would on a long link.
func (r *Relay) pipe(dst, src net.Conn) {
	defer r.wg.Done()
	q := make(chan chunk, relayQueue)
	go func() {
		defer close(q)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{b: append([]byte(nil), buf[:n]...), due: time.Now().Add(r.delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		if d := time.Until(c.due); d > 0 {
			time.Sleep(d)
		}
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	// One side is done: close both, which ends the other direction too.
	src.Close()
	dst.Close()
	r.mu.Lock()
	delete(r.conns, src)
	delete(r.conns, dst)
	r.mu.Unlock()
	for range q { // let the reader finish
	}
}

package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxRestarts is how often a local worker that died is started again, as
// a Job starts a failed pod again.
const maxRestarts = 3

// LocalConfig starts workers as processes of this machine.
type LocalConfig struct {
	Config
	// Command is the worker's command line without its coordinator
	// address and index (obsbench worker), which are appended.
	Command []string
	// Prefix starts each worker's command line, with {index} replaced by
	// the worker's index (ip netns exec w{index}, taskset -c {index}).
	Prefix []string
	// Listen, host:port, is where the workers reach the coordinator over
	// TCP; empty: a Unix socket in a directory only this account may
	// enter. Port 0: any free port.
	Listen string
	// LogDir holds each worker's output, worker-N.log.
	LogDir string
	// Register bounds the wait for every worker to register.
	Register time.Duration
}

// Local is a coordinator with its workers on this machine, reached over a
// Unix socket in a directory only this account may enter, or over TLS
// where only a worker with the token is served.
type Local struct {
	*Coordinator
	cfg  LocalConfig
	dir  string
	addr string
	// credential is the token, with the pin over TCP (TokenEnv).
	credential string
	mu         sync.Mutex
	procs      []*exec.Cmd
	closing    bool
	wg         sync.WaitGroup
}

// NewToken returns a fresh secret for workers to present.
func NewToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// StartLocal listens, starts cfg.Workers worker processes and waits until
// all have registered.
func StartLocal(ctx context.Context, cfg LocalConfig) (*Local, error) {
	if cfg.Token == "" {
		t, err := NewToken()
		if err != nil {
			return nil, err
		}
		cfg.Token = t
	}
	dir, err := os.MkdirTemp("", "obsbench-fleet-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var ln net.Listener
	var addr, pin string
	if cfg.Listen != "" {
		ln, pin, err = ListenTLS(cfg.Listen)
		addr = cfg.Listen
		if err == nil {
			addr = ln.Addr().String()
		}
	} else {
		sock := filepath.Join(dir, "coordinator.sock")
		ln, err = net.Listen("unix", sock)
		addr = "unix:" + sock
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("listen for workers: %w", err)
	}
	l := &Local{Coordinator: NewCoordinator(ln, cfg.Config), cfg: cfg, dir: dir, addr: addr, credential: Credential(cfg.Token, pin),
		procs: make([]*exec.Cmd, cfg.Workers)}
	if err := os.MkdirAll(cfg.LogDir, 0o700); err != nil {
		l.Close()
		return nil, err
	}
	for i := range cfg.Workers {
		if err := l.start(i, 0); err != nil {
			l.Close()
			return nil, err
		}
	}
	if err := l.Wait(ctx, cfg.Register); err != nil {
		l.Close()
		return nil, fmt.Errorf("%w (their output: %s)", err, filepath.Join(cfg.LogDir, "worker-N.log"))
	}
	return l, nil
}

// start starts worker i, and starts it again if it dies while the
// coordinator goes on.
func (l *Local) start(i, restarts int) error {
	logPath := filepath.Join(l.cfg.LogDir, fmt.Sprintf("worker-%d.log", i))
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	line := workerLine(l.cfg.Prefix, l.cfg.Command, l.addr, i)
	cmd := exec.Command(line[0], line[1:]...)
	cmd.Env = append(os.Environ(), TokenEnv+"="+l.credential)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group: a Ctrl-C reaches the coordinator, which
	// stops the workers in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start worker %d: %w", i, err)
	}
	l.mu.Lock()
	l.procs[i] = cmd
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		err := cmd.Wait()
		f.Close()
		l.mu.Lock()
		closing := l.closing
		l.mu.Unlock()
		if closing {
			return
		}
		if restarts >= maxRestarts {
			l.cfg.Log("worker %d exited (%v) and was restarted %d times already: not again (its output: %s)", i, err, restarts, logPath)
			return
		}
		l.cfg.Log("worker %d exited (%v); starting it again (its output: %s)", i, err, logPath)
		if err := l.start(i, restarts+1); err != nil {
			l.cfg.Log("%v", err)
		}
	}()
	return nil
}

// workerLine is worker i's command line: the prefix, {index} replaced,
// then the worker command with the coordinator's address and i.
func workerLine(prefix, command []string, addr string, i int) []string {
	index := strconv.Itoa(i)
	var line []string
	for _, w := range prefix {
		line = append(line, strings.ReplaceAll(w, "{index}", index))
	}
	line = append(line, command...)
	return append(line, "--coordinator", addr, "--index", index)
}

// PIDs are the worker processes (experiment.LocalLoad): their CPU is the
// driver's.
func (l *Local) PIDs() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var pids []int
	for _, p := range l.procs {
		if p != nil && p.Process != nil {
			pids = append(pids, p.Process.Pid)
		}
	}
	return pids
}

// Process is worker i's process, nil if none.
func (l *Local) Process(i int) *os.Process {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.procs[i] == nil {
		return nil
	}
	return l.procs[i].Process
}

// Close disconnects the workers, which then exit; a worker still there
// after five seconds is killed.
func (l *Local) Close() error {
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
	err := l.Coordinator.Close()
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		l.mu.Lock()
		for _, p := range l.procs {
			if p != nil && p.Process != nil {
				p.Process.Kill()
			}
		}
		l.mu.Unlock()
		<-done
	}
	return errors.Join(err, os.RemoveAll(l.dir))
}

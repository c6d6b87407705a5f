package postgres

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/internal/slowfs"
)

// ConsumerSpec is a logical replication slot and the reader obsbench runs
// on it.
type ConsumerSpec struct {
	DB, Slot, Plugin string
	// Rate is how fast the reader takes the decoded stream, bytes per
	// second; 0: as fast as it can.
	Rate int64
}

// StartConsumer creates spec's slot and starts pg_recvlogical on it, as
// the server's OS user; obsbench reads its output at spec's rate and
// throws it away. A reader slower than the changes stops taking the
// stream, so pg_recvlogical stops confirming it, and the server keeps the
// WAL from the slot's restart point on. stop ends the reader and drops
// the slot: a logical slot left behind would keep WAL forever, and a
// server whose wal_level is lowered again refuses to start with one.
func (p *Instance) StartConsumer(ctx context.Context, spec ConsumerSpec) (stop func() error, err error) {
	conn := fmt.Sprintf("host=%s port=%d user=postgres dbname=%s passfile=%s", p.Base, p.port, spec.DB, p.PassFile())
	if _, err := p.command(ctx, "pg_recvlogical", "-d", conn, "--slot", spec.Slot, "--create-slot", "-P", spec.Plugin); err != nil {
		return nil, fmt.Errorf("create logical replication slot %s: %w", spec.Slot, err)
	}
	dropSlot := func() error { return p.dropSlot(context.WithoutCancel(ctx), spec.DB, spec.Slot) }
	// -F 1 -s 1: what it wrote confirmed to the server every second (by
	// default every 10), so that the slot's confirmed position follows
	// what the reader took.
	cmd := exec.Command(filepath.Join(p.binDir, "pg_recvlogical"), "-d", conn, "--slot", spec.Slot, "--start", "-f", "-", "-F", "1", "-s", "1")
	cmd.Dir = p.Base
	cmd.Env = p.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.Cred}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, errors.Join(err, dropSlot())
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if p.Mounted() {
		slowfs.CloseFuseOnExec()
	}
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("start pg_recvlogical: %w", err), dropSlot())
	}
	var rate atomic.Int64
	rate.Store(spec.Rate)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = readPaced(out, &rate, func([]byte) {}) // its output is thrown away
	}()
	stop = func() error {
		// pg_recvlogical ends at SIGINT once its write to the pipe
		// returns: the reader drains the pipe at full speed first.
		rate.Store(0)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		<-done
		var werr error
		if err := cmd.Wait(); err != nil {
			werr = fmt.Errorf("pg_recvlogical on slot %s: %w: %s", spec.Slot, err, strings.TrimSpace(stderr.String()))
		}
		return errors.Join(werr, dropSlot())
	}
	// Started is not reading: the run begins once the slot has its reader.
	if err := p.waitSlotActive(ctx, spec, done); err != nil {
		return nil, errors.Join(err, stop())
	}
	return stop, nil
}

// waitSlotActive waits until spec's slot has a reader, or the reader
// ended (done closed: its output ended).
func (p *Instance) waitSlotActive(ctx context.Context, spec ConsumerSpec, done <-chan struct{}) error {
	q := "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + spec.Slot + "' AND active"
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-done:
			return fmt.Errorf("pg_recvlogical on slot %s ended as it started", spec.Slot)
		default:
		}
		n, err := p.psqlIn(ctx, spec.DB, q)
		if err != nil {
			return err
		}
		if n == "1" {
			return nil
		}
	}
	return fmt.Errorf("pg_recvlogical did not start reading slot %s in 30s", spec.Slot)
}

// dropSlot drops a logical slot once its reader has let go of it: a
// walsender may hold it for a moment after its client went. A logical
// slot is dropped from its own database.
func (p *Instance) dropSlot(ctx context.Context, db, slot string) error {
	q := "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND NOT active"
	left := "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "'"
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := p.psqlIn(ctx, db, q); err != nil {
			return fmt.Errorf("drop logical replication slot %s: %w", slot, err)
		}
		n, err := p.psqlIn(ctx, db, left)
		if err != nil {
			return fmt.Errorf("drop logical replication slot %s: %w", slot, err)
		}
		if n == "0" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("logical replication slot %s still in use after 30s; drop it with pg_drop_replication_slot", slot)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

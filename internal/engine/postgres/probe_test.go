package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// A row lock that one session holds and another waits for shows in the
// wait sampler as a Lock wait, and the blocked session's process is the one
// sampled.
func TestWaitSamplerSeesLockWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := newServer(t)
	holder, waiter := connect(t, s.DSN()), connect(t, s.DSN())

	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE member SET lastname = lastname WHERE member_no = 1"); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "UPDATE member SET lastname = 'x' WHERE member_no = 1")
		blocked <- err
	}()

	on, off := servertest.SampleWaits(t, ctx, servertest.OpenWaits(t, ctx, s))
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-blocked; err != nil {
		t.Fatalf("blocked update: %v", err)
	}
	if off.Total() != 0 {
		t.Errorf("off profile has samples %v; the observer was never off", off.Counts)
	}
	servertest.MostTicksSeeLock(t, on, "Lock:transactionid", "Lock:tuple")
}

// The counters' difference over a window is the work done in it: a known
// number of committed and rolled-back transactions, and their WAL.
func TestCountersCountTransactions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := newServer(t)
	// The dataset load's sessions publish their statistics when they
	// exit, which may be after this test starts: wait until the counts
	// settle (each reading adds its own two commits, and nothing else
	// does).
	before, err := s.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		next, err := s.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		settled := next["xact_commit"]-before["xact_commit"] <= 2
		before = next
		if settled {
			break
		}
	}
	const commits, rollbacks = 300, 40
	conn := connect(t, s.DSN())
	for i := 0; i < commits; i++ {
		if _, err := conn.Exec(ctx, fmt.Sprintf("UPDATE payment SET payment_amt = payment_amt WHERE payment_no = %d", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < rollbacks; i++ {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// A backend publishes its statistics when it exits, at the latest.
	conn.Close(ctx)

	var after map[string]float64
	polls := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		polls++
		if after, err = s.Counters(ctx); err != nil {
			t.Fatal(err)
		}
		if after["xact_rollback"]-before["xact_rollback"] >= rollbacks && after["xact_commit"]-before["xact_commit"] >= commits {
			break
		}
	}
	// Besides the test's own: two commits per Counters call (a loaded
	// machine publishes late, so the loop polls more) and the
	// connection's start-up queries, a handful at most.
	dc, dr := after["xact_commit"]-before["xact_commit"], after["xact_rollback"]-before["xact_rollback"]
	if dc < commits || dc > float64(commits+2*polls+10) {
		t.Errorf("xact_commit grew by %v, want %d (+ a few of obsbench's own)", dc, commits)
	}
	if dr != rollbacks {
		t.Errorf("xact_rollback grew by %v, want %d", dr, rollbacks)
	}
	if after["wal_records"]-before["wal_records"] < commits {
		t.Errorf("wal_records grew by %v for %d updates", after["wal_records"]-before["wal_records"], commits)
	}
	if d := after["tup_updated"] - before["tup_updated"]; d != commits {
		t.Errorf("tup_updated grew by %v, want %d", d, commits)
	}
	for _, k := range []string{"wal_bytes", "wal_sync", "checkpoints", "temp_bytes"} {
		if _, ok := after[k]; !ok {
			t.Errorf("counter %s missing: %v", k, after)
		}
	}
}

// With pg_wait_sampling loaded, its profile grows while sessions work, and
// without it there is no profile and no error.
func TestWaitProfileOfPgWaitSampling(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := newServer(t)
	if p, err := s.WaitProfile(ctx); p != nil || err != nil {
		t.Fatalf("without the extension: %v, %v; want nil, nil", p, err)
	}
	servertest.ApplyForTest(t, s, "postgres", "pg-wait-sampling")
	before, err := s.WaitProfile(ctx)
	if err != nil || before == nil {
		t.Fatalf("WaitProfile = %v, %v; want a profile", before, err)
	}
	conn := connect(t, s.DSN())
	if _, err := conn.Exec(ctx, "SELECT pg_sleep(0.5)"); err != nil {
		t.Fatal(err)
	}
	after, err := s.WaitProfile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := after["Timeout:PgSleep"] - before["Timeout:PgSleep"]; d < 10 {
		t.Errorf("Timeout:PgSleep grew by %d samples over a 0.5 s sleep; want about 50 (10 ms period)", d)
	}
}

// A batch of samples taken by the server shows a session that PostgreSQL
// calls running while it is blocked in the kernel (COPY TO PROGRAM waiting
// for its program to exit: pclose(3), which PostgreSQL does not
// instrument) by its kernel wait, read at the sample's moment; without
// kernel, as no wait.
func TestBatchWaitsReadKernelWaits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := newServer(t)
	conn := connect(t, s.DSN())
	pid := int(conn.PgConn().PID())
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "COPY (SELECT 1) TO PROGRAM 'sleep 2'")
		done <- err
	}()
	src := servertest.OpenWaits(t, ctx, s)
	time.Sleep(300 * time.Millisecond)
	for _, kernel := range []bool{true, false} {
		batch, err := src.(collect.BatchWaitSource).BatchWaits(ctx, 5, 20*time.Millisecond, kernel)
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) != 5 {
			t.Fatalf("%d samples, want 5", len(batch))
		}
		for i, sample := range batch {
			if due := time.Duration(i+1) * 20 * time.Millisecond; sample.After < due {
				t.Errorf("sample %d taken %v after the batch began, before it was due (%v)", i, sample.After, due)
			}
			var seen *collect.SessionWait
			for j := range sample.Waits {
				if sample.Waits[j].PID == pid {
					seen = &sample.Waits[j]
				}
			}
			switch {
			case seen == nil:
				t.Errorf("kernel %v, sample %d: session %d not listed: %+v", kernel, i, pid, sample.Waits)
			case seen.Wait != "":
				t.Errorf("kernel %v, sample %d: wait %q; PostgreSQL reports none in pclose", kernel, i, seen.Wait)
			case kernel && seen.Kernel != "do_wait":
				t.Errorf("sample %d: kernel wait %q, want do_wait (waiting for its child)", i, seen.Kernel)
			case !kernel && seen.Kernel != "":
				t.Errorf("sample %d: kernel wait %q read though not asked for", i, seen.Kernel)
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("COPY TO PROGRAM: %v", err)
	}
	// With the session idle, every sample is still there, empty of it.
	batch, err := src.(collect.BatchWaitSource).BatchWaits(ctx, 3, 10*time.Millisecond, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, sample := range batch {
		if sample.After < time.Duration(i+1)*10*time.Millisecond || slices.ContainsFunc(sample.Waits, func(w collect.SessionWait) bool { return w.PID == pid }) {
			t.Errorf("idle: sample %d = %+v; want it taken when due, without the idle session", i, sample)
		}
	}
}

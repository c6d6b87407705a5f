package mariadb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// A session waiting for a table lock shows its state as its wait; the
// sampler reads it from the processlist without performance_schema.
func TestWaitSamplerSeesLockWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, m := newManaged(t)
	db := servertest.OpenMariaDB(t, m, "obsbench")
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, "LOCK TABLES member WRITE"); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "UPDATE member SET lastname = 'x' WHERE member_no = 1")
		blocked <- err
	}()

	src := servertest.OpenWaits(t, ctx, s)
	if src.BackendPID() <= 0 {
		t.Errorf("sampler thread id = %d", src.BackendPID())
	}
	on, _ := servertest.SampleWaits(t, ctx, src)
	if _, err := holder.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	if err := <-blocked; err != nil {
		t.Fatalf("blocked update: %v", err)
	}
	servertest.MostTicksSeeLock(t, on, "State:Waiting for table metadata lock", "State:Waiting for table level lock")
}

// The counters' difference over a window is the work done in it: a known
// number of prepared executions.
func TestCountersCountStatements(t *testing.T) {
	ctx := context.Background()
	s, _ := newManaged(t)
	st := servertest.Prepare(t, servertest.Session(t, s), "SELECT lastname FROM member WHERE member_no = ?")
	before, err := s.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 250
	for i := range n {
		if err := st.Exec(ctx, int32(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	after, err := s.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := after["com_stmt_execute"] - before["com_stmt_execute"]; d != n {
		t.Errorf("com_stmt_execute grew by %v; want %d", d, n)
	}
	// Each execution reads one row by primary key.
	if d := after["handler_read_key"] - before["handler_read_key"]; d < n {
		t.Errorf("handler_read_key grew by %v; want at least %d", d, n)
	}
	for _, name := range []string{"questions", "innodb_os_log_written", "innodb_data_fsyncs", "performance_schema_lost"} {
		if _, ok := after[name]; !ok {
			t.Errorf("counter %s missing: %v", name, after)
		}
	}
}

// The engine's wait profile is read only when performance_schema is on:
// the collector never turns an observer on.
func TestWaitProfileOnlyWithPerformanceSchema(t *testing.T) {
	ctx := context.Background()
	s, _ := newManaged(t)
	p, err := s.WaitProfile(ctx)
	if err != nil || p != nil {
		t.Fatalf("WaitProfile with performance_schema off = %v, %v; want nil (not collected)", p, err)
	}
	servertest.ApplyForTest(t, s, "mariadb", "perf-schema")
	d, _ := dataset.Lookup("credit")
	if err := s.Verify(ctx, d); err != nil {
		t.Fatal(err)
	}
	p, err = s.WaitProfile(ctx)
	if err != nil || len(p) == 0 {
		t.Fatalf("WaitProfile with performance_schema on = %v, %v; want file and table waits", p, err)
	}
	found := false
	for k := range p {
		found = found || strings.HasPrefix(k, "wait/io/")
	}
	if !found {
		t.Errorf("no wait/io/ event in %v", p)
	}
}

func TestInspectReportsEnabledObservers(t *testing.T) {
	ctx := context.Background()
	s, _ := newManaged(t)
	for _, name := range []string{"general-log-file", "server-audit-file"} {
		servertest.ApplyForTest(t, s, "mariadb", name)
	}
	in, err := s.Inspect(ctx, servertest.Catalog(t).All("mariadb"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(in.Observers, ","); got != "general-log-file,server-audit-file" {
		t.Errorf("observers in force = %s; want general-log-file,server-audit-file", got)
	}
	var names []string
	for _, st := range in.Settings {
		names = append(names, st.Name)
	}
	for _, want := range []string{"general_log", "server_audit_logging"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("observing variables %v lack %s", names, want)
		}
	}
	if len(in.Plugins) != 1 || !strings.HasPrefix(in.Plugins[0], "SERVER_AUDIT") || in.Consumers != nil {
		t.Errorf("plugins %v, consumers %v; want SERVER_AUDIT and performance_schema off", in.Plugins, in.Consumers)
	}
}

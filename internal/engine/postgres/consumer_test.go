package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// A logical slot read by a consumer: the one reading at full speed keeps
// up with a workload that writes, the slow one falls behind and the
// server keeps the WAL it has not confirmed, which the counters report;
// both slots are gone after the revert, and the server, its wal_level
// lowered again, starts.
func TestLogicalDecodingConsumers(t *testing.T) {
	ctx := context.Background()
	s, _ := newManaged(t)
	wl, err := workload.Lookup("inserts-autocommit")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx, wl.Setup); err != nil {
		t.Fatal(err)
	}
	behind, retained := map[string]float64{}, map[string]float64{}
	cat := servertest.Catalog(t)
	for _, name := range []string{"logical-decoding", "logical-decoding-slow-consumer"} {
		o, err := cat.Lookup("postgres", name)
		if err != nil {
			t.Fatal(err)
		}
		if o.Consumer != nil && o.Consumer.Rate != "" {
			// The catalog's slow reader, 64 KiB/s, kept up with half of
			// what a busy machine's inserts wrote in the test's seconds;
			// one of 8 KiB/s falls behind at any speed.
			consumer := *o.Consumer
			consumer.Rate = "8KiB"
			o.Consumer = &consumer
		}
		_, revert := servertest.Apply(t, s, o)
		if got := query(t, s, "SELECT count(*) FROM pg_replication_slots WHERE slot_type = 'logical' AND active"); got != "1" {
			t.Errorf("%s: %s active logical slots after Apply; want 1", name, got)
		}
		res := servertest.RunWorkload(t, s.Dial, driver.Config{Clients: 2, Duration: 5 * time.Second}, wl)
		time.Sleep(1500 * time.Millisecond) // a status from the consumer every second
		c, err := s.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		behind[name], retained[name] = c["gauge_slot_reader_behind_bytes"], c["gauge_slot_wal_retained_bytes"]
		t.Logf("%s: %d rows inserted; WAL retained %.0f bytes, the reader %.0f bytes behind", name, res.Executed, c["gauge_slot_wal_retained_bytes"], behind[name])
		if c["gauge_slot_wal_retained_bytes"] < behind[name] {
			t.Errorf("%s: the slot retains less WAL than its reader has not confirmed", name)
		}
		revert()
		if got := query(t, s, "SELECT count(*) FROM pg_replication_slots"); got != "0" {
			t.Errorf("%s: %s replication slots after Revert; want 0", name, got)
		}
		if got := query(t, s, "SHOW wal_level"); got != "replica" {
			t.Errorf("%s: wal_level %s after Revert; want replica", name, got)
		}
	}
	// Five seconds of inserts make megabytes of wal2json (fewer on a busy
	// machine); a consumer of 8 KiB/s confirms a small part of them, one
	// at full speed all but the last second's.
	const slowName = "logical-decoding-slow-consumer"
	if slow, fast := behind[slowName], behind["logical-decoding"]; slow < 2*fast || slow < retained[slowName]/2 {
		t.Errorf("reader behind: slow consumer %.0f bytes of the %.0f its slot retains, fast %.0f; want the slow one's over half its slot's and twice the fast one's",
			slow, retained[slowName], fast)
	}
}

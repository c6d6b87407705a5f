package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/engine/postgres"
)

// runPgbench runs pgbench -R for the warm-up and the window, logging each
// transaction (-l), and reads from its logs the transactions that ended
// in the window: their count, and their latency, which pgbench -R counts
// from each one's scheduled start, and lag.
//
// precise sets the timer slack of pgbench's threads to 1 ns, as the
// shell that execs it writes its own /proc/self/timerslack_ns, which the
// exec keeps and every thread pgbench creates inherits.
func runPgbench(ctx context.Context, c config, pg *postgres.Instance, bin string, precise bool) (sample, error) {
	dir, err := os.MkdirTemp("", "open-model-")
	if err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(dir)
	secs := int((c.warmup + c.duration) / time.Second)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "pgbench"), "-n", "-M", "prepared", "-b", c.script,
		"-c", strconv.Itoa(c.clients), "-j", strconv.Itoa(c.threads), "-T", strconv.Itoa(secs), "-R", strconv.FormatFloat(c.rate, 'f', -1, 64),
		"-l", "--log-prefix", filepath.Join(dir, "tx"), "-h", pg.SocketDir(), "-p", strconv.Itoa(pg.Port()), "-U", "postgres", database)
	if precise {
		cmd = exec.CommandContext(ctx, "sh", append([]string{"-c", `echo 1 > /proc/self/timerslack_ns && exec "$0" "$@"`}, cmd.Args...)...)
	}
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGPASSFILE="+pg.PassFile())
	cmd.Dir = dir
	_, cpu, err := sidebyside.RunPeer(cmd, nil)
	if err != nil {
		return sample{}, err
	}
	logs, err := filepath.Glob(filepath.Join(dir, "tx.*"))
	if err != nil || len(logs) == 0 {
		return sample{}, fmt.Errorf("pgbench wrote no transaction log in %s", dir)
	}
	var txs []loggedTx
	for _, f := range logs {
		t, err := readTxLog(f)
		if err != nil {
			return sample{}, err
		}
		txs = append(txs, t...)
	}
	s, err := windowOf(txs, c.warmup, c.duration)
	s.clientUS = perTxn(c, cpu)
	return s, err
}

// loggedTx is one line of pgbench's per-transaction log: when the
// transaction ended, its latency from its scheduled start and its lag,
// in µs.
type loggedTx struct {
	end          time.Time
	latency, lag float64
}

// readTxLog reads a pgbench -l log: client_id transaction_no time
// script_no time_epoch time_us schedule_lag (with -R), skipped
// transactions ("skipped" for time) left out.
func readTxLog(path string) ([]loggedTx, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []loggedTx
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fs := strings.Fields(sc.Text())
		if len(fs) < 7 || fs[2] == "skipped" {
			continue
		}
		var v [4]float64
		for i, k := range []int{2, 4, 5, 6} {
			if v[i], err = strconv.ParseFloat(fs[k], 64); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
		}
		out = append(out, loggedTx{end: time.Unix(int64(v[1]), int64(v[2])*1000), latency: v[0], lag: v[3]})
	}
	return out, sc.Err()
}

// windowOf is the sample of the transactions that ended in the window:
// from warmup after the first one's scheduled start, for duration.
func windowOf(txs []loggedTx, warmup, duration time.Duration) (sample, error) {
	if len(txs) == 0 {
		return sample{}, fmt.Errorf("pgbench logged no transaction")
	}
	start := txs[0].end
	for _, t := range txs {
		if s := t.end.Add(-time.Duration(t.latency) * time.Microsecond); s.Before(start) {
			start = s
		}
	}
	from, to := start.Add(warmup), start.Add(warmup+duration)
	var lat []float64
	var lag float64
	for _, t := range txs {
		if !t.end.Before(from) && t.end.Before(to) {
			lat = append(lat, t.latency/1000)
			lag += t.lag / 1000
		}
	}
	if len(lat) == 0 {
		return sample{}, fmt.Errorf("no pgbench transaction ended in the measured window")
	}
	slices.Sort(lat)
	return sample{achieved: float64(len(lat)) / duration.Seconds(), p50: percentile(lat, 50), p99: percentile(lat, 99), lag: lag / float64(len(lat))}, nil
}

// percentile is the q-th percentile (0-100) of sorted xs, the nearest
// rank: the value at or below which q% of them are.
func percentile(sorted []float64, q float64) float64 {
	k := int(math.Ceil(float64(len(sorted))*q/100)) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

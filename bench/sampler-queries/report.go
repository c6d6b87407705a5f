package main

import (
	"runtime"
	"slices"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/stats"
)

// report writes the medians per variant over the rounds, with the range,
// and what each would cost the machine at the interval.
func report(c config, version string, vs []variant, got []sample) string {
	w := sidebyside.NewReport("What one wait sample costs on PostgreSQL", c.command)
	p := w.Line
	p("- server: PostgreSQL %s (managed), %d sessions active in `pg_sleep`, 4 idle; pg_wait_sampling loaded, its own collector at one sample a minute", version, c.sessions)
	p("- the CPUs kept busy by %d spinning processes (`-busy`), as by a workload", c.busy)
	p("- each variant: %d samples per round on a new connection after 20 of warm-up, one every %v (a batch: %d per call, the server sleeping between them); %d rounds in an order drawn from seed %d", c.samples, c.interval, batchSize, c.rounds, c.seed)
	p("- server CPU: the answering backend's time on a CPU (`/proc/PID/schedstat`); client CPU: this process's (`getrusage`), Go's runtime included")
	perSecond := float64(time.Second) / float64(c.interval)
	p("- %% of the machine: (server + client) µs per sample × %.0f samples a second ÷ %d CPUs\n", perSecond, runtime.NumCPU())
	p("| variant | what it reads | server µs/sample, median [range] | client µs/sample, median [range] | rows/sample | %% of the machine at %v |", c.interval)
	p("|---|---|---:|---:|---:|---:|")
	for _, v := range vs {
		var server, client, rows []float64
		for _, s := range got {
			if s.variant == v.name {
				server = append(server, s.serverUS)
				client = append(client, s.clientUS)
				rows = append(rows, float64(s.rows)/float64(s.samples))
			}
		}
		if len(server) == 0 {
			continue
		}
		total := stats.Median(server) + stats.Median(client)
		p("| %s | %s | %.1f [%.1f, %.1f] | %.1f [%.1f, %.1f] | %.1f | %.2f |", v.name, v.what,
			stats.Median(server), slices.Min(server), slices.Max(server), stats.Median(client), slices.Min(client), slices.Max(client),
			stats.Median(rows), 100*total*perSecond/1e6/float64(runtime.NumCPU()))
	}
	p("\nThis is the sampler's own work, on a server that does nothing else. On a workload each sample also disturbs the workload's processes (it preempts one, and the sampler's processes wake up), which bench/collectors measures as lost throughput.")
	return w.String()
}

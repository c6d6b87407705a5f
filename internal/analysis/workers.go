package analysis

import (
	"fmt"
	"slices"

	"github.com/obsbench/obsbench/internal/result"
)

// workers summarizes what each worker process ran of a condition's runs
// (those that succeeded), in worker order; nil when no worker ran them.
func workers(runs []result.Run) []result.WorkerSummary {
	type acc struct {
		s          result.WorkerSummary
		tput, cpus []float64
	}
	by := map[int]*acc{}
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		for _, w := range r.Driver.Workers {
			a := by[w.Worker]
			if a == nil {
				a = &acc{s: result.WorkerSummary{Worker: w.Worker, Host: w.Host, Sessions: w.Sessions}}
				by[w.Worker] = a
			}
			a.tput = append(a.tput, w.Throughput)
			a.cpus = append(a.cpus, w.CPU.Pct)
			a.s.CPUPctMax = max(a.s.CPUPctMax, w.CPU.Pct)
			a.s.ClockErrorMS = max(a.s.ClockErrorMS, w.ClockErrorMS)
		}
	}
	var out []result.WorkerSummary
	for _, a := range by {
		a.s.Throughput, a.s.CPUPct = median(a.tput), median(a.cpus)
		out = append(out, a.s)
	}
	slices.SortFunc(out, func(a, b result.WorkerSummary) int { return a.Worker - b.Worker })
	return out
}

// workerWarnings names the workers that used more than DriverCPUWarnPct
// of their machine in some run: a worker short of CPU offers less load
// than asked, and its sessions' latency includes its own queueing.
func workerWarnings(name string, ws []result.WorkerSummary) []string {
	var out []string
	for _, w := range ws {
		if w.CPUPctMax > DriverCPUWarnPct {
			out = append(out, fmt.Sprintf("%s: worker %d (%s) used up to %.0f%% of its machine's CPU (over %d%%): it may limit the load it offers",
				name, w.Worker, w.Host, w.CPUPctMax, DriverCPUWarnPct))
		}
	}
	return out
}

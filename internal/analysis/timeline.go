package analysis

import (
	"fmt"

	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// seriesBucket is the width, in seconds, of the buckets in which a run's
// throughput is read over time: study 2's charts used 5 s.
const seriesBucket = 5

// streamQuiet is how many seconds a live stream must receive nothing, to
// the end of the run, to count as stopped.
const streamQuiet = 5

// timeline fills in cs's throughput over time and the transients of its
// rounds runs: level changes against the baseline's level, and live
// streams that stopped receiving while statements went on.
func timeline(cs *result.ConditionSummary, runs []result.Run, baseline float64) {
	var sums, counts []float64
	for _, r := range runs {
		if r.Error != "" || len(r.Driver.PerSecond) == 0 {
			continue
		}
		per := TotalPerSecond(r.Driver.PerSecond)
		for i, v := range Bucket(per, seriesBucket) {
			if i == len(sums) {
				sums, counts = append(sums, 0), append(counts, 0)
			}
			sums[i] += v
			counts[i]++
		}
		if !r.Method.InRounds() || cs.Name == observer.Baseline {
			continue
		}
		if t, ok := DetectTransient(per, seriesBucket, baseline); ok {
			cs.Transients = append(cs.Transients, result.Transient{
				Round: r.Round, Kind: t.Kind, AtSeconds: t.At,
				BeforePct: pct(t.BeforeOverhead), AfterPct: pct(t.AfterOverhead), Note: t.String(),
			})
		}
		if len(r.StreamPerSecond) > 0 {
			bytes := make([]float64, len(r.StreamPerSecond))
			for i, b := range r.StreamPerSecond {
				bytes[i] = float64(b)
			}
			if at, ok := StreamStopped(bytes, per, streamQuiet); ok {
				cs.Transients = append(cs.Transients, result.Transient{
					Round: r.Round, Kind: "stream stopped", AtSeconds: at,
					Note: fmt.Sprintf("the live stream received nothing from second %d to the end, while statements went on: its reader was cut off or stalled", at),
				})
			}
		}
	}
	for i := range sums {
		cs.Series = append(cs.Series, sums[i]/counts[i])
	}
}

// pct is a fraction in percent; 0 when unknown (no baseline level), since
// JSON has no NaN.
func pct(fraction float64) float64 { return 100 * finite(fraction) }

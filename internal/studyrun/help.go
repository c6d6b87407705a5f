package studyrun

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
)

// Options are the settings a study takes besides its experiment's.
type Options struct {
	// ReliabilityDuration is the length of the audit study's reliability
	// run (0 skips it); Threshold the overhead auditing must stay under;
	// Workloads the ones its sweep runs.
	ReliabilityDuration time.Duration
	Threshold           float64
	Workloads           []string
	// Capture is a capture file the replay study replays instead of
	// capturing its mix for CaptureDuration.
	Capture         string
	CaptureDuration time.Duration
	// User are the settings the user chose, over the study's.
	User spec.Chosen
}

// DefaultOptions are st's own settings as the study defines them.
func DefaultOptions(st study.Study) Options {
	return Options{ReliabilityDuration: defaultReliability, Threshold: defaultThreshold,
		Workloads: st.Workloads, CaptureDuration: defaultCaptureDuration}
}

// Flag is a flag a study takes besides the run flags.
type Flag struct{ Name, Usage string }

// Flags are st's own flags (the kinds of study that have any), in
// the order its help lists them.
func Flags(st study.Study) []Flag {
	switch {
	case st.Audit != "":
		return []Flag{
			{"reliability-duration", "length of the reliability run that checks the audit trail record by record (0 skips it)"},
			{"threshold", "overhead in percent auditing must stay under, with 95% confidence, at every session count"},
			{"workloads", "which workloads the concurrency sweep runs"},
		}
	case st.Replay:
		return []Flag{
			{"capture", "replay this capture file (from 'obsbench capture') instead of capturing the study's mix"},
			{"capture-duration", "how long the study's mix runs while its statements are captured"},
		}
	}
	return nil
}

// Help prints what a study does, the run flags it sets (which the
// user's flags override) and its own flags.
func Help(w io.Writer, st study.Study) {
	fmt.Fprintf(w, "usage: obsbench study %s [study flags] [run flags]\n\n%s\n%s\n\n", st.Name, st.Title, st.Question)
	fmt.Fprintf(w, "the study's run flags (any flag of 'obsbench run' given to the study overrides them; 'obsbench run -h' lists them all):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, kv := range studyDefaults(st) {
		fmt.Fprintf(tw, "  --%s\t%s\n", kv[0], kv[1])
	}
	tw.Flush()
	if own := Flags(st); len(own) > 0 {
		d := DefaultOptions(st)
		defaults := map[string]string{
			"reliability-duration": d.ReliabilityDuration.String(), "threshold": strconv.FormatFloat(d.Threshold, 'g', -1, 64),
			"workloads": strings.Join(d.Workloads, ","), "capture": "none", "capture-duration": d.CaptureDuration.String(),
		}
		fmt.Fprintf(w, "\nthe study's own flags:\n")
		for _, f := range own {
			fmt.Fprintf(w, "  --%s\n    \t%s (default %s)\n", f.Name, f.Usage, defaults[f.Name])
		}
	}
}

// studyDefaults are the run flags the study sets, in order.
func studyDefaults(st study.Study) [][2]string {
	out := [][2]string{{"engine", st.Engine}}
	if len(st.Workloads) > 0 {
		out = append(out, [2]string{"workload", strings.Join(st.Workloads, ", then ")})
	} else {
		out = append(out, [2]string{"workload", st.Workload})
	}
	if len(st.Sessions) > 0 {
		out = append(out, [2]string{"sessions", spec.FormatSessions(st.Sessions)})
	} else {
		out = append(out, [2]string{"clients", strconv.Itoa(st.Clients)})
	}
	out = append(out, [2]string{"observers", strings.Join(st.Observers(), ",")}, [2]string{"method", string(st.Method)})
	if st.Rounds > 0 {
		out = append(out, [2]string{"rounds", strconv.Itoa(st.Rounds)})
	}
	if st.Duration > 0 {
		out = append(out, [2]string{"duration", st.Duration.String()})
	}
	waits := "off"
	if st.Waits > 0 {
		waits = st.Waits.String()
	}
	out = append(out, [2]string{"waits", waits})
	if st.Standby != "" {
		out = append(out, [2]string{"standby", string(st.Standby)})
	}
	for _, name := range slices.Sorted(maps.Keys(st.Params)) {
		out = append(out, [2]string{name, strconv.Itoa(st.Params[name])})
	}
	if c := st.Count; c != nil {
		out = append(out, [2]string{"count", "true (where valgrind is installed)"},
			[2]string{"count-statements", strconv.Itoa(c.Statements)}, [2]string{"count-warmup", strconv.Itoa(c.Warmup)})
		if c.Shrink > 0 {
			out = append(out, [2]string{"count-shrink", strconv.Itoa(c.Shrink)})
		}
	}
	return out
}

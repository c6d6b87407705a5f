package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/obsbench/obsbench/internal/study"
)

// studyFlag is a flag a study takes besides the run flags.
type studyFlag struct{ name, value, usage string }

// studyFlags are each kind of study's own flags, as its command reads
// them (study_audit.go, study_replay.go), with their defaults.
func studyFlags(st study.Study) []studyFlag {
	switch {
	case st.Audit != "":
		return []studyFlag{
			{"reliability-duration", defaultReliability.String(), "length of the reliability run that checks the audit trail record by record (0 skips it)"},
			{"threshold", strconv.FormatFloat(defaultThreshold, 'g', -1, 64), "overhead in percent auditing must stay under, with 95% confidence, at every session count"},
			{"workloads", strings.Join(st.Workloads, ","), "which workloads the concurrency sweep runs"},
		}
	case st.Replay:
		return []studyFlag{
			{"capture", "", "replay this capture file (from 'obsbench capture') instead of capturing the study's mix"},
			{"capture-duration", defaultCaptureDuration.String(), "how long the study's mix runs while its statements are captured"},
		}
	}
	return nil
}

// studyHelp prints what a study does, the run flags it sets (which the
// user's flags override) and its own flags.
func studyHelp(w io.Writer, st study.Study) {
	fmt.Fprintf(w, "usage: obsbench study %s [study flags] [run flags]\n\n%s\n%s\n\n", st.Name, st.Title, st.Question)
	fmt.Fprintf(w, "the study's run flags (any flag of 'obsbench run' given here overrides them; 'obsbench run -h' lists them all):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, kv := range studyDefaults(st) {
		fmt.Fprintf(tw, "  --%s\t%s\n", kv[0], kv[1])
	}
	tw.Flush()
	if own := studyFlags(st); len(own) > 0 {
		fmt.Fprintf(w, "\nthe study's own flags:\n")
		for _, f := range own {
			def := f.value
			if def == "" {
				def = "none"
			}
			fmt.Fprintf(w, "  --%s\n    \t%s (default %s)\n", f.name, f.usage, def)
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
	if st.Sessions != "" {
		out = append(out, [2]string{"sessions", st.Sessions})
	} else {
		out = append(out, [2]string{"clients", strconv.Itoa(st.Clients)})
	}
	out = append(out, [2]string{"observers", strings.Join(st.Observers(), ",")}, [2]string{"method", st.Method})
	if st.Rounds > 0 {
		out = append(out, [2]string{"rounds", strconv.Itoa(st.Rounds)})
	}
	if st.Duration != "" {
		out = append(out, [2]string{"duration", st.Duration})
	}
	out = append(out, [2]string{"waits", st.Waits})
	if st.Standby != "" {
		out = append(out, [2]string{"standby", st.Standby})
	}
	for i := 0; i+1 < len(st.Args); i += 2 {
		out = append(out, [2]string{strings.TrimPrefix(st.Args[i], "--"), st.Args[i+1]})
	}
	return out
}

// wantsHelp says whether args ask for help.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

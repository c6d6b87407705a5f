package app

import (
	"errors"
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
)

// PrintStudy prints the study's table after its experiment, when the
// experiment is one (also when it was resumed); err, whatever it prints.
func (c Experiment) PrintStudy(w io.Writer, sum *result.Summary, err error) error {
	if sum == nil || c.Study == "" || c.Format != spec.FormatText {
		return err
	}
	st, lerr := study.Lookup(c.Engine, c.Study)
	if lerr != nil {
		return errors.Join(err, lerr)
	}
	if len(st.Workloads) > 0 {
		return err // the study's table comes after all its workloads
	}
	fmt.Fprintln(w)
	switch {
	case len(st.Matrix) > 0:
		return errors.Join(err, report.Targets(w, st, *sum))
	case st.Replay:
		return errors.Join(err, report.Replay(w, st, *sum))
	}
	return errors.Join(err, report.Study(w, st, *sum))
}

// printCountedStudy prints the study's counted table after a counted run
// of its conditions alone ('obsbench study targets --method
// instructions').
func (c Experiment) printCountedStudy(w io.Writer, k *result.Counted) error {
	if c.Study == "" || c.Format != spec.FormatText {
		return nil
	}
	st, err := study.Lookup(c.Engine, c.Study)
	if err != nil || len(st.Matrix) == 0 {
		return err
	}
	fmt.Fprintln(w)
	return report.TargetsCounted(w, st, k)
}

package study

import (
	"slices"
	"testing"

	"github.com/obsbench/obsbench/internal/experiment"
)

// A study by duet reads its A/A cell from the duet's own A/A arm, and runs
// no second baseline for it; a study by other methods runs baseline-again.
func TestAACell(t *testing.T) {
	if duetAA != experiment.AAName {
		t.Fatalf("duetAA = %q; want the duet's A/A arm, %q", duetAA, experiment.AAName)
	}
	for _, st := range All() {
		key := st.Name + "/" + st.Engine
		i := slices.IndexFunc(st.Matrix, func(c Cell) bool { return c.Target == aaTarget })
		if i < 0 {
			continue
		}
		want := "baseline-again"
		if st.Method == experiment.MethodDuet {
			want = duetAA
		}
		if got := st.Matrix[i].Observer; got != want {
			t.Errorf("%s (method %s): A/A cell %q; want %q", key, st.Method, got, want)
		}
		if obs := st.Observers(); slices.Contains(obs, duetAA) || (want == duetAA && slices.Contains(obs, "baseline-again")) {
			t.Errorf("%s: observers %v; want neither the duet's A/A arm nor a second baseline", key, obs)
		}
	}
}

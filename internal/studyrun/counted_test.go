package studyrun

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
)

// A study's counted part alone (--method instructions) keeps the study's
// conditions and count, leaves out its timed settings unless the user
// gave them (which the counted run then refuses by name), and counts the
// counted rounds; a study that counts nothing is refused, naming those
// that do.
func TestCountedOnly(t *testing.T) {
	for _, eng := range []string{"postgres", "mariadb"} {
		st, err := study.Lookup(eng, "targets")
		if err != nil {
			t.Fatal(err)
		}
		s := Spec(st)
		s.Method = "instructions"
		s.Out = filepath.Join(t.TempDir(), "out")
		cs, err := countedOnly(st, s, spec.Chosen{"method": true})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append([]string{"rounds"}, spec.TimingFlags...) {
			if cs.IsChosen(f) {
				t.Errorf("%s: %s still chosen", eng, f)
			}
		}
		c, err := app.Resolve(cs)
		if err != nil {
			t.Fatalf("%s: %v", eng, err)
		}
		if c.Rounds != c.Count.Rounds || c.Count.After || c.Count.Statements != st.Count.Statements || c.Count.Shrink != st.Count.Shrink || c.Count.Sessions != 1 {
			t.Errorf("%s: rounds %d (count's %d), after %v, count %+v; want the study's count %+v, one session", eng, c.Rounds, c.Count.Rounds, c.Count.After, c.Count, *st.Count)
		}
		if len(c.ObserverList()) != len(st.Observers())+1 {
			t.Errorf("%s: %d conditions, want the baseline and the study's %d observers", eng, len(c.ObserverList()), len(st.Observers()))
		}

		// What the user gives stays theirs: --rounds counts, --clients is refused.
		s.Rounds, s.Clients = 4, 3
		cs, err = countedOnly(st, s, spec.Chosen{"method": true, "rounds": true, "clients": true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := app.Resolve(cs); err == nil || !strings.Contains(err.Error(), "--clients sets timed runs") {
			t.Errorf("%s: user's --clients: %v, want refused", eng, err)
		}
		cs.Unchoose("clients")
		if c, err := app.Resolve(cs); err != nil || c.Rounds != 4 {
			t.Errorf("%s: user's --rounds 4: %v, rounds %d", eng, err, c.Rounds)
		}
	}

	st, err := study.Lookup("postgres", "sync-commit")
	if err != nil {
		t.Fatal(err)
	}
	_, err = countedOnly(st, Spec(st), spec.Chosen{"method": true})
	if err == nil || !strings.Contains(err.Error(), "study sync-commit has no counted part (studies that count: targets)") {
		t.Errorf("sync-commit: %v, want refused naming targets", err)
	}
}

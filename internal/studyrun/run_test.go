package studyrun

import (
	"path/filepath"
	"testing"

	"github.com/obsbench/obsbench/internal/app"
	_ "github.com/obsbench/obsbench/internal/engine/mariadb"
	_ "github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/study"
)

// Every built-in study's spec, as the study sets it, is a valid
// experiment; the user's settings override it as values.
func TestStudySpecsResolve(t *testing.T) {
	for _, eng := range []string{"postgres", "mariadb"} {
		for _, name := range study.Names(eng) {
			st, err := study.Lookup(eng, name)
			if err != nil {
				t.Fatal(err)
			}
			s := Spec(st)
			s.Out = filepath.Join(t.TempDir(), "out")
			for _, wl := range append([]string{s.Workload}, st.Workloads...) {
				ws := forWorkload(s, wl)
				c, err := app.Resolve(ws)
				if err != nil {
					t.Errorf("%s on %s, workload %s: %v", name, eng, wl, err)
					continue
				}
				if c.Engine != eng || c.Study != name || len(c.ObserverList()) < 2 {
					t.Errorf("%s on %s: engine %s study %s, %d observers", name, eng, c.Engine, c.Study, len(c.ObserverList()))
				}
				for p := range ws.Params {
					if m := c.WorkloadMeta(); !m.HasParam(p) {
						t.Errorf("%s: workload %s got parameter %s it does not take", name, wl, p)
					}
				}
			}
		}
	}
}

package workload_test

import (
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/workload"
)

func TestWithParams(t *testing.T) {
	wl, err := workload.Lookup("inserts-batched")
	if err != nil {
		t.Fatal(err)
	}
	if got := wl.Value("batch"); got != 10000 {
		t.Errorf("default batch = %d; want 10000", got)
	}
	wl, err = wl.WithParams(map[string]int{"batch": 7})
	if err != nil || wl.Value("batch") != 7 || wl.New() == nil {
		t.Errorf("WithParams(batch=7) = %d, %v", wl.Value("batch"), err)
	}
	for _, tc := range []struct {
		name   string
		params map[string]int
		want   string
	}{
		{"inserts-batched", map[string]int{"batch": 0}, "--batch 0: want 1 to"},
		{"inserts-batched", map[string]int{"rows": 5}, "has no parameter --rows; its parameters: --batch"},
		{"credit-top1", map[string]int{"batch": 5}, "credit-top1 has no parameter --batch"},
	} {
		m, _ := workload.Lookup(tc.name)
		if _, err := m.WithParams(tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s.WithParams(%v) = %v; want an error with %q", tc.name, tc.params, err, tc.want)
		}
	}
	var names []string
	for _, p := range workload.AllParams() {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "batch,scale" {
		t.Errorf("AllParams = %v; want [batch scale]", names)
	}
}

// dss-mix takes --scale and runs on both engines' dialects with its own
// set-up each.
func TestDSSMixMeta(t *testing.T) {
	m, err := workload.Lookup("dss-mix")
	if err != nil {
		t.Fatal(err)
	}
	if m.Dataset != "dss" || !m.HasParam("scale") || m.Value("scale") != 1 {
		t.Errorf("dss-mix: dataset %s, scale %d", m.Dataset, m.Value("scale"))
	}
	for _, e := range []string{"postgres", "mariadb"} {
		if len(m.SetupFor(e)) != 2 || !m.RunsOn(e) {
			t.Errorf("%s: set-up %q", e, m.SetupFor(e))
		}
	}
	if _, err := m.WithParams(map[string]int{"scale": 0}); err == nil {
		t.Error("--scale 0 accepted")
	}
	if n := len(workload.DSSQueryNames()); n < 10 {
		t.Errorf("%d queries; want a mix of 10 or more", n)
	}
}

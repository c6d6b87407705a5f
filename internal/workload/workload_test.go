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
	if strings.Join(names, ",") != "batch" {
		t.Errorf("AllParams = %v; want [batch]", names)
	}
}

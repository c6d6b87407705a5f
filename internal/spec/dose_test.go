package spec

import (
	"slices"
	"strings"
	"testing"
)

func TestParseDose(t *testing.T) {
	for _, tt := range []struct {
		in     string
		want   Dose
		err    string
		sweeps bool
	}{
		{"auto_explain.sample_rate=0.01,0.1,0.5,1", Dose{"auto_explain.sample_rate", []string{"0.01", "0.1", "0.5", "1"}}, "", true},
		{"log_slow_rate_limit=100, 10", Dose{"log_slow_rate_limit", []string{"100", "10"}}, "", true},
		{"pgaudit.log=read", Dose{"pgaudit.log", []string{"read"}}, "", false},
		{"0.1,1", Dose{}, "want SETTING=V1,V2,...", false},
		{"x y=1", Dose{}, "want SETTING=V1,V2,...", false},
		{"rate=1,,2", Dose{}, "an empty value", false},
		{"rate=1,2,1", Dose{}, "1 given twice", false},
		{"dir=../x", Dose{}, "names a directory", false},
	} {
		got, err := ParseDose(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseDose(%q) = %v; want an error with %q", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || got.Setting != tt.want.Setting || !slices.Equal(got.Values, tt.want.Values) || got.Sweeps() != tt.sweeps):
			t.Errorf("ParseDose(%q) = %+v, %v; want %+v (sweeps %v)", tt.in, got, err, tt.want, tt.sweeps)
		}
	}
}

// A dose is one observer's: refused beside another sweep, without that
// observer alone, and as a sweep in a per-run format.
func TestValidateDose(t *testing.T) {
	d := &Dose{"auto_explain.sample_rate", []string{"0.1", "1"}}
	for _, tt := range []struct {
		edit func(*Spec)
		want string
	}{
		{func(s *Spec) {}, ""},
		{func(s *Spec) { s.Observers = nil }, "give that observer alone"},
		{func(s *Spec) { s.Observers = []string{"a", "b"} }, "give that observer alone"},
		{func(s *Spec) { s.Sessions = []int{1, 2} }, "not with another sweep"},
		{func(s *Spec) { s.Format = FormatCSV }, "prints the sweep as text or json"},
		{func(s *Spec) { s.Format, s.Dose = FormatCSV, &Dose{"x", []string{"1"}} }, ""},
	} {
		s := Default()
		s.Observers, s.Dose = []string{"auto-explain-sampled"}, d
		tt.edit(&s)
		err := s.validateDose()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("validateDose = %v; want %q", err, tt.want)
		}
	}
}

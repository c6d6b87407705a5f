package spec

import (
	"strings"

	"github.com/obsbench/obsbench/internal/observer"
)

// Dose is --dose SETTING=V1,V2,...: one observer's setting given each
// value in turn, from the least of it to the most. With one value the
// experiment runs the observer with that value; with several it sweeps
// them, one experiment each (as --sessions and --load sweep).
type Dose struct {
	Setting string   `json:"setting"`
	Values  []string `json:"values"`
}

// ParseDose reads --dose's SETTING=V1,V2,...: a setting's name and its
// values once each, from the least of the observer to the most (which
// for a setting such as log_slow_rate_limit is the numbers descending).
func ParseDose(s string) (Dose, error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || !observer.IsSettingName(name) {
		return Dose{}, Invalidf("--dose %s: want SETTING=V1,V2,... (e.g. auto_explain.sample_rate=0.01,0.1,1)", s)
	}
	d := Dose{Setting: name}
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			return Dose{}, Invalidf("--dose %s: an empty value; want SETTING=V1,V2,...", s)
		case strings.ContainsAny(v, "/\\") || v == "." || v == "..":
			return Dose{}, Invalidf("--dose %s: value %q names a directory of the results; want a setting's value", s, v)
		}
		for _, seen := range d.Values {
			if seen == v {
				return Dose{}, Invalidf("--dose %s: %s given twice; give each value once, from the least to the most", s, v)
			}
		}
		d.Values = append(d.Values, v)
	}
	return d, nil
}

// String is the dose as --dose takes it.
func (d Dose) String() string { return d.Setting + "=" + strings.Join(d.Values, ",") }

// ValuesOf is the dose's values; none where there is no dose.
func (d *Dose) ValuesOf() []string {
	if d == nil {
		return nil
	}
	return d.Values
}

// Sweeps says whether the dose runs one experiment per value.
func (d *Dose) Sweeps() bool { return d != nil && len(d.Values) > 1 }

// validateDose refuses a dose where it cannot apply: beside another sweep,
// on anything but one observer, a sweep's output in a per-run format.
func (s Spec) validateDose() error {
	d := s.Dose
	switch {
	case d == nil:
		return nil
	case len(s.Sessions) > 0 || len(s.Loads) > 0:
		return Invalidf("--dose %s sweeps one observer's setting: not with another sweep (--sessions, several --load)", d)
	case len(s.Observers) != 1 || s.Observers[0] == "baseline":
		return Invalidf("--dose %s sets one observer's setting: give that observer alone (--observers NAME)", d)
	case d.Sweeps() && s.Format != FormatText && s.Format != FormatJSON:
		return Invalidf("--dose %s prints the sweep as text or json, not %s (each value's directory has its own summary.json)", d, s.Format)
	}
	return nil
}

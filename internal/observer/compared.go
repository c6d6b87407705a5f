package observer

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Compared is what an experiment compares on engine: the baseline, then
// the named observers each once, or the catalog's defaults where none is
// named.
func (c *Catalog) Compared(engine string, names []string) ([]Observer, error) {
	base, err := c.Lookup(engine, Baseline)
	if err != nil {
		return nil, err
	}
	out := []Observer{base}
	if len(names) == 0 {
		out = append(out, c.Defaults(engine)...)
	}
	seen := map[string]bool{Baseline: true}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		o, err := c.Lookup(engine, name)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// Dosed is o with its setting given value (a dose of it, --dose), its
// other settings as they are; an error names o's settings when it has
// no such one.
func (o Observer) Dosed(setting, value string) (Observer, error) {
	if _, ok := o.Settings[setting]; !ok {
		names := slices.Sorted(maps.Keys(o.Settings))
		if len(names) == 0 {
			return o, fmt.Errorf("observer %s has no settings to dose", o.Name)
		}
		return o, fmt.Errorf("observer %s has no setting %s; want one of its own: %s", o.Name, setting, strings.Join(names, ", "))
	}
	o.Settings = maps.Clone(o.Settings)
	o.Settings[setting] = value
	if ev := o.Events; ev != nil && ev.SampledBy != "" && sampledSetting(ev.SampledBy) == setting {
		// The dose moves the share sampled: the count is checked
		// against the new one, every statement at a share of 1, and
		// not at all where it records none.
		share, ok := sampledShare(ev.SampledBy, value)
		if !ok {
			return o, fmt.Errorf("%s=%s: want a number, the share of statements %s samples", setting, value, o.Name)
		}
		counter := *ev
		counter.Sampled = share
		switch {
		case share >= 1:
			counter.Sampled, counter.SampledBy = 0, ""
		case share <= 0:
			o.Events = nil
			return o, nil
		}
		o.Events = &counter
	}
	return o, nil
}

// sampledShare is the share of statements that value of an events
// counter's SampledBy setting samples; ok is false where value is not a
// number.
func sampledShare(sampledBy, value string) (share float64, ok bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil || v < 0 {
		return 0, false
	}
	if strings.HasPrefix(sampledBy, "1/") {
		if v == 0 {
			return 0, false
		}
		return 1 / v, true
	}
	return v, true
}

// sampledSetting is the setting an events counter's SampledBy names.
func sampledSetting(sampledBy string) string { return strings.TrimPrefix(sampledBy, "1/") }

// sampledByHolds says whether o's Sampled is what its SampledBy setting's
// value gives.
func sampledByHolds(o Observer) bool {
	share, ok := sampledShare(o.Events.SampledBy, o.Settings[sampledSetting(o.Events.SampledBy)])
	return ok && math.Abs(share-o.Events.Sampled) < 1e-9
}

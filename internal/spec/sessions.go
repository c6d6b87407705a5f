package spec

import (
	"strconv"
	"strings"
)

// ParseSessions reads --sessions: session counts, comma-separated,
// ascending, each 1 to 1000.
func ParseSessions(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 1000 {
			return nil, Invalidf("--sessions %s: %q is not a session count from 1 to 1000", s, f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, Invalidf("--sessions %s: give the counts once each, ascending (e.g. 1,2,4,8)", s)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, Invalidf("--sessions %q: give session counts, e.g. 1,2,4,8", s)
	}
	return out, nil
}

// FormatSessions writes session counts as ParseSessions reads them.
func FormatSessions(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// ParseLoads reads --load: one percentage of the probed capacity, or
// several, ascending, for a sweep (e.g. 25,50,75,90).
func ParseLoads(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := strconv.ParseFloat(strings.TrimSuffix(f, "%"), 64)
		if err != nil || p <= 0 || p > 100 {
			return nil, Invalidf("--load %s: %q is not a percentage of the probed capacity, above 0 and at most 100", s, f)
		}
		if len(out) > 0 && p <= out[len(out)-1] {
			return nil, Invalidf("--load %s: give the loads once each, ascending (e.g. 25,50,75,90)", s)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, Invalidf("--load %q: give a percentage, e.g. 50, or several, e.g. 25,50,75,90", s)
	}
	return out, nil
}

// FormatLoads writes loads as ParseLoads reads them.
func FormatLoads(ps []float64) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.FormatFloat(p, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

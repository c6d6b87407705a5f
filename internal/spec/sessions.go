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

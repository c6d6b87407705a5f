package observer

// A mistyped name is answered with the known name it most likely meant,
// for errors that say "did you mean ...?": an observer's name here, a
// flag's in the command.

import "strings"

// ClosestName returns the known name nearest to name by edit distance, when it
// is near enough to be a plausible typo; else the nearest that starts
// with name; else "".
func ClosestName(name string, known []string) string {
	best, bestD, prefix, prefixD := "", len(name)/3+2, "", 0
	for _, k := range known {
		d := editDistance(name, k)
		if d < bestD {
			best, bestD = k, d
		}
		if strings.HasPrefix(k, name) && (prefix == "" || d < prefixD) {
			prefix, prefixD = k, d
		}
	}
	if best != "" {
		return best
	}
	return prefix
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

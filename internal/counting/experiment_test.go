package counting

import (
	"testing"
	"time"
)

// The time left is the pace of the runs done, said once a few are done
// and not after the last.
func TestLeft(t *testing.T) {
	for _, c := range []struct {
		elapsed     time.Duration
		done, total int
		want        string
	}{
		{10 * time.Second, 2, 100, ""},
		{40 * time.Second, 4, 100, ", about 16m0s left"},
		{100 * time.Second, 50, 152, ", about 3m20s left"},
		{300 * time.Second, 152, 152, ""},
		{27 * time.Second, 15, 16, ""}, // under 5 s: nothing to say
	} {
		if got := left(c.elapsed, c.done, c.total); got != c.want {
			t.Errorf("left(%v, %d, %d) = %q, want %q", c.elapsed, c.done, c.total, got, c.want)
		}
	}
}

package postgres

import "testing"

// The server's complaints that it could not write its log are counted,
// also when a read cuts one in two.
func TestLogStreamCountsLogWriteFaults(t *testing.T) {
	s := &LogStream{}
	for _, chunk := range []string{
		"LOG:  all fine\ncould not write to log file: No space ",
		"left on device\nother\ncould not write to log file: Input/output error\n",
		"could not write to log",
	} {
		s.scanFaults([]byte(chunk))
	}
	n, last := s.Faults()
	if n != 2 || last != "could not write to log file: Input/output error" {
		t.Errorf("Faults = %d, %q; want 2 and the I/O error", n, last)
	}
}

package collect

import (
	"syscall"
	"time"
)

// SelfCPU is the user and system CPU time of this process so far, all
// threads, from getrusage: finer than /proc's ticks, for a process that
// measures its own cost (a worker, a bench's driver).
func SelfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

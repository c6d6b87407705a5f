// Package collect measures what happens during a run besides the driver's
// own counting: CPU time of the server's processes and of the driver,
// read from /proc.
package collect

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// userHZ is the unit of utime and stime in /proc/PID/stat. Linux reports
// them in USER_HZ, which is 100 on every architecture Go supports.
const userHZ = 100

// procStat is what CPU accounting needs from /proc/PID/stat.
type procStat struct {
	ppid     int
	cpuTicks int64 // utime + stime
}

func readStat(pid string) (procStat, error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) may hold spaces and parentheses; the
	// fields that follow start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("malformed /proc/%s/stat", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("malformed /proc/%s/stat", pid)
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	utime, _ := strconv.ParseInt(string(f[11]), 10, 64)
	stime, _ := strconv.ParseInt(string(f[12]), 10, 64)
	return procStat{ppid: ppid, cpuTicks: utime + stime}, nil
}

// treeTicks returns the CPU ticks of root and every process descended from
// it, by pid.
func treeTicks(root int) (map[int]int64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	stats := map[int]procStat{}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(e.Name())
		if err != nil {
			continue // exited meanwhile
		}
		stats[pid] = st
		children[st.ppid] = append(children[st.ppid], pid)
	}
	if _, ok := stats[root]; !ok {
		return nil, fmt.Errorf("process %d not found", root)
	}
	out := map[int]int64{}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		out[pid] = stats[pid].cpuTicks
		queue = append(queue, children[pid]...)
	}
	return out, nil
}

// CPU is CPU time used during a window.
type CPU struct {
	Seconds float64 `json:"seconds"`
	// Pct is Seconds as a share of all the machine's cores over the window.
	Pct float64 `json:"pct"`
}

// CPUWindow measures the CPU time of a process tree and of this process
// between Start and Stop.
type CPUWindow struct {
	root   int
	t0     time.Time
	server map[int]int64
	self   int64
}

// StartCPU starts measuring. serverRoot is the server's main process (0 when
// the server is not on this machine: only the driver is measured then).
func StartCPU(serverRoot int) (*CPUWindow, error) {
	w := &CPUWindow{root: serverRoot, t0: time.Now()}
	self, err := readStat("self")
	if err != nil {
		return nil, err
	}
	w.self = self.cpuTicks
	if serverRoot > 0 {
		if w.server, err = treeTicks(serverRoot); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Stop returns the CPU used by the server tree and by this process (the
// driver) since Start. Processes that started during the window count from
// zero; those that exited during it are lost, which is why the driver's
// sessions are connected before the window opens.
func (w *CPUWindow) Stop() (server *CPU, driver CPU, err error) {
	elapsed := time.Since(w.t0).Seconds()
	capacity := elapsed * float64(runtime.NumCPU())
	self, err := readStat("self")
	if err != nil {
		return nil, CPU{}, err
	}
	ds := float64(self.cpuTicks-w.self) / userHZ
	driver = CPU{Seconds: ds, Pct: 100 * ds / capacity}
	if w.root <= 0 {
		return nil, driver, nil
	}
	now, err := treeTicks(w.root)
	if err != nil {
		return nil, driver, err
	}
	var ticks int64
	for pid, t := range now {
		ticks += t - w.server[pid] // absent at the start: counts from zero
	}
	ss := float64(ticks) / userHZ
	return &CPU{Seconds: ss, Pct: 100 * ss / capacity}, driver, nil
}

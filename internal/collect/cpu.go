// Package collect measures what happens during a run besides the driver's
// own counting: CPU time of the server's processes and of the driver,
// read from /proc.
package collect

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// userHZ is the unit of utime and stime in /proc/PID/stat. Linux reports
// them in USER_HZ, which is 100 on every architecture Go supports.
const userHZ = 100

// procStat is what CPU accounting needs from /proc/PID/stat.
type procStat struct {
	ppid       int
	cpuTicks   int64 // utime + stime
	childTicks int64 // cutime + cstime: exited children it has reaped
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
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("malformed /proc/%s/stat", pid)
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	utime, _ := strconv.ParseInt(string(f[11]), 10, 64)
	stime, _ := strconv.ParseInt(string(f[12]), 10, 64)
	cutime, _ := strconv.ParseInt(string(f[13]), 10, 64)
	cstime, _ := strconv.ParseInt(string(f[14]), 10, 64)
	return procStat{ppid: ppid, cpuTicks: utime + stime, childTicks: cutime + cstime}, nil
}

// treeTicks returns the CPU ticks of root and every process descended from
// it, plus those of the children root has reaped: the sum only grows, even
// as connections come and go, because an exited backend's time moves into
// the postmaster's cutime.
func treeTicks(root int) (int64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
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
	rootStat, ok := stats[root]
	if !ok {
		return 0, fmt.Errorf("process %d not found", root)
	}
	total := rootStat.childTicks
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		total += stats[pid].cpuTicks
		queue = append(queue, children[pid]...)
	}
	return total, nil
}

// Descendants is roots and every process descended from them, parents
// first (a process that exits meanwhile may be missing).
func Descendants(roots ...int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(e.Name()); err == nil {
			children[st.ppid] = append(children[st.ppid], pid)
		}
	}
	var out []int
	seen := map[int]bool{}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if pid <= 0 || seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		queue = append(queue, children[pid]...)
	}
	return out
}

// ProcessCPU is the CPU time process pid has used so far, in seconds. pid
// may be a thread of a threaded server (MariaDB's session thread): then
// its own time is read from its task entry, since /proc/TID/stat sums the
// whole process.
func ProcessCPU(pid int) (float64, error) {
	path := strconv.Itoa(pid)
	if tgid := threadGroup(pid); tgid > 0 && tgid != pid {
		path = strconv.Itoa(tgid) + "/task/" + path
	}
	st, err := readStat(path)
	if err != nil {
		return 0, err
	}
	return float64(st.cpuTicks) / userHZ, nil
}

// MachinePct is cpuSeconds used over wall seconds as % of all the
// machine's cores.
func MachinePct(cpuSeconds, wallSeconds float64) float64 {
	if wallSeconds <= 0 {
		return 0
	}
	return 100 * cpuSeconds / (wallSeconds * float64(machineCPUs()))
}

// threadGroup is the process (Tgid) that thread id belongs to, 0 if unknown.
func threadGroup(id int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(id), "status"))
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("Tgid:")); ok {
			n, _ := strconv.Atoi(string(bytes.TrimSpace(v)))
			return n
		}
	}
	return 0
}

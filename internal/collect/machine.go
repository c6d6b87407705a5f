package collect

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
)

// Machine is plain data, kept in package result with the summaries it is
// part of.
type Machine = result.Machine

// ThisMachine describes this computer: cores, memory, kernel release and
// CPU model, from /proc. Fields it cannot read stay empty.
func ThisMachine() Machine {
	m := Machine{Cores: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				m.MemoryBytes = kb * 1024
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range bytes.Split(b, []byte("\n")) {
			if k, v, ok := bytes.Cut(line, []byte(":")); ok && string(bytes.TrimSpace(k)) == "model name" {
				m.CPU = string(bytes.TrimSpace(v))
				break
			}
		}
	}
	return m
}

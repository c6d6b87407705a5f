package collect

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// kernelWaits reads the kernel waits of the wait sampler's sessions,
// keeping each process's /proc files open from one sample to the next.
//
// The sampler reads them for every active session every tick, in the
// load driver's process: with os.ReadFile that is an open, a stat, two
// reads and a close per file, and a second file when the wait channel is
// empty. An open file is re-read with one pread(2) at offset 0, which
// makes the kernel generate its content afresh.
type kernelWaits struct {
	files map[int]*procWaitFiles
	tick  int64
	buf   [128]byte
}

// procWaitFiles are one process's open wait files; -1 until opened.
type procWaitFiles struct {
	wchan, syscall int
	seen           int64 // the sample that last read them
}

// keepUnseen is how many samples a process's files stay open after the
// last sample that listed it (a session between statements is not listed).
const keepUnseen = 100

func newKernelWaits() *kernelWaits {
	return &kernelWaits{files: map[int]*procWaitFiles{}}
}

// next starts a sample: files of processes no sample has listed for a
// while are closed.
func (k *kernelWaits) next() {
	k.tick++
	if k.tick%keepUnseen != 0 {
		return
	}
	for pid, f := range k.files {
		if k.tick-f.seen > keepUnseen {
			f.close()
			delete(k.files, pid)
		}
	}
}

// read is KernelWait(pid) over the open files.
func (k *kernelWaits) read(pid int) string {
	f := k.files[pid]
	if f == nil {
		f = &procWaitFiles{wchan: -1, syscall: -1}
		k.files[pid] = f
	}
	f.seen = k.tick
	b, ok := k.pread(&f.wchan, pid, "wchan")
	if !ok {
		// Gone, or not ours to read: forget it, so that a process that
		// takes the number later is opened afresh.
		f.close()
		delete(k.files, pid)
		return ""
	}
	if w := wchanName(b); w != "" {
		return w
	}
	b, ok = k.pread(&f.syscall, pid, "syscall")
	if !ok {
		return ""
	}
	return syscallWait(b)
}

// pread reads /proc/PID/NAME from the start, opening it into *fd first.
func (k *kernelWaits) pread(fd *int, pid int, name string) ([]byte, bool) {
	if *fd < 0 {
		n, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/"+name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, false
		}
		*fd = n
	}
	n, err := unix.Pread(*fd, k.buf[:], 0)
	if err != nil || n < 0 {
		return nil, false
	}
	return k.buf[:n], true
}

// close closes every open file.
func (k *kernelWaits) close() {
	for pid, f := range k.files {
		f.close()
		delete(k.files, pid)
	}
}

func (f *procWaitFiles) close() {
	for _, fd := range []*int{&f.wchan, &f.syscall} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// wchanName is the wait channel in /proc/PID/wchan's content, "" when the
// process is running ("0" or empty).
func wchanName(b []byte) string {
	if w := strings.TrimSpace(string(b)); w != "0" {
		return w
	}
	return ""
}

// syscallWait names the system call a process sleeps in from
// /proc/PID/syscall's content, "" when it is running or the content is
// not understood.
func syscallWait(b []byte) string {
	f := strings.Fields(string(b))
	if len(f) < 2 || f[0] == "running" {
		return ""
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 {
		return ""
	}
	if name, ok := syscallNames[n]; ok {
		return "syscall:" + name
	}
	return "syscall:" + f[0]
}

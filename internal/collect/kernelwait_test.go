package collect

import (
	"os"
	"testing"
	"time"
)

// The sampler's reader keeps a process's files open and reads each sample
// afresh: it follows the process from one wait to another, agrees with
// KernelWait, says "" once the process is gone, and forgets its files.
func TestKernelWaitsRereadsOpenFiles(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	// The shell first waits for its sleep, then becomes cat, which waits
	// to read the pipe: the same process, two waits.
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "sleep 0.5; exec cat"},
		&os.ProcAttr{Files: []*os.File{r, null, null}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	k := newKernelWaits()
	defer k.close()
	var seen []string
	for _, at := range []time.Duration{250 * time.Millisecond, 1000 * time.Millisecond} {
		time.Sleep(at - time.Duration(len(seen))*250*time.Millisecond)
		k.next()
		got, want := k.read(p.Pid), KernelWait(p.Pid)
		if got == "" || got != want {
			t.Fatalf("read = %q, KernelWait = %q: want the same wait", got, want)
		}
		seen = append(seen, got)
	}
	if seen[0] == seen[1] {
		t.Fatalf("the same wait %q before and after exec: the open file was not read afresh", seen[0])
	}
	if f := k.files[p.Pid]; f == nil || f.wchan < 0 {
		t.Fatal("the wait channel's file was not kept open")
	}
	p.Kill()
	p.Wait()
	k.next()
	if got := k.read(p.Pid); got != "" {
		t.Fatalf("read after the process ended = %q, want \"\"", got)
	}
	if _, ok := k.files[p.Pid]; ok {
		t.Fatal("the files of an ended process are still kept")
	}
}

// The wait is read from the two files' contents: a wait channel when
// there is one, else the system call the process sleeps in.
func TestKernelWaitContents(t *testing.T) {
	tests := []struct {
		wchan, syscall, want string
	}{
		{"0", "running", ""},
		{"", "running", ""},
		{"pipe_write", "", "pipe_write"},
		{"0", "232 0x5 0x7ffd 0x1 0xffffffff 0x0 0x0 0x7ffd 0x7f12", "syscall:epoll_wait"},
		{"0", "999 0x1 0x2 0x3 0x4 0x5 0x6 0x7ffd 0x7f12", "syscall:999"},
		{"0", "garbage", ""},
	}
	for _, tt := range tests {
		got := wchanName([]byte(tt.wchan))
		if got == "" {
			got = syscallWait([]byte(tt.syscall))
		}
		if got != tt.want {
			t.Errorf("wchan %q, syscall %q: %q, want %q", tt.wchan, tt.syscall, got, tt.want)
		}
	}
}

// Files of processes no sample has listed for keepUnseen samples are
// closed.
func TestKernelWaitsClosesFilesOfUnlistedProcesses(t *testing.T) {
	k := newKernelWaits()
	defer k.close()
	k.next()
	k.read(os.Getpid())
	if _, ok := k.files[os.Getpid()]; !ok {
		t.Fatal("no files kept after a read")
	}
	for i := 0; i < 2*keepUnseen; i++ {
		k.next()
	}
	if _, ok := k.files[os.Getpid()]; ok {
		t.Fatalf("files still open %d samples after the last read", 2*keepUnseen)
	}
}

package server

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/obsbench/obsbench/internal/slowfs"
)

// slowDirName is the slow directory's mount point in the server's temp
// directory; its data lands in slowDirName+"-data".
const slowDirName = "slowdir"

// Dir is a managed server's private temporary directory, Base, owned by
// the OS user it runs as (Cred; nil: ours), and the slow directories
// mounted in it. Log takes the server's notes.
type Dir struct {
	Base   string
	Cred   *syscall.Credential
	Log    func(format string, args ...any)
	mounts []*slowfs.Mount
}

// Mounted says whether a slow directory is mounted in p: a process
// started meanwhile must not inherit the mount's FUSE descriptor.
func (p *Dir) Mounted() bool { return len(p.mounts) > 0 }

// SinkDir is where MountSlowDir mounts the slow directory.
func (p *Dir) SinkDir() string { return filepath.Join(p.Base, slowDirName) }

// MountSlowDir mounts SinkDir as a slow directory that behaves as dev
// says; the server's user owns it. release unmounts it; the files written
// stay in the backing directory until Stop.
func (p *Dir) MountSlowDir(ctx context.Context, dev slowfs.Device) (release func() error, err error) {
	dir, backing := p.SinkDir(), p.SinkDir()+"-data"
	for _, d := range []string{dir, backing} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		if p.Cred != nil {
			if err := os.Chown(d, int(p.Cred.Uid), int(p.Cred.Gid)); err != nil {
				return nil, err
			}
		}
	}
	m, err := slowfs.New(dir, backing, dev)
	if err != nil {
		return nil, err
	}
	if dev.StallEvery > 0 {
		p.Log("slow directory %s: %v per write, stalls %v every %v", dir, dev.Delay, dev.Stall, dev.StallEvery)
	} else {
		p.Log("slow directory %s: %v per write", dir, dev.Delay)
	}
	p.mounts = append(p.mounts, m)
	return func() error {
		if err := m.Close(); err != nil {
			return err
		}
		for i, x := range p.mounts {
			if x == m {
				p.mounts = append(p.mounts[:i], p.mounts[i+1:]...)
				break
			}
		}
		return nil
	}, nil
}

// unmountAll detaches every mount under dir: those of this server at
// Stop, or a killed obsbench's when its directory is reaped. A directory
// with a mount in it cannot be removed.
func unmountAll(dir string, logf func(string, ...any)) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 1 && strings.HasPrefix(fields[1], dir+"/") {
			points = append(points, fields[1])
		}
	}
	for _, mp := range points {
		if err := slowfs.Unmount(mp); err != nil {
			logf("unmount %s: %v", mp, err)
		} else {
			logf("unmounted %s", mp)
		}
	}
}

// CloseMounts unmounts this server's slow directories once it has stopped.
func (p *Dir) CloseMounts() error {
	var errs []string
	for _, m := range p.mounts {
		if err := m.Close(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	p.mounts = nil
	unmountAll(p.Base, p.Log)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Refused counts the writes the slow directories refused because they
// were full, and describes the latest.
func (p *Dir) Refused() (n int64, last string) {
	for _, m := range p.mounts {
		if r := m.Refused(); r > 0 {
			n += r
			last = fmt.Sprintf("%d write(s) to the log directory %s failed: no space left on device", r, m.Dir)
		}
	}
	return n, last
}

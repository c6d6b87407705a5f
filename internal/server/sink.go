package server

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/internal/slowfs"
)

// slowDirName is the slow directory's mount point in the server's temp
// directory; its data lands in slowDirName+"-data".
const slowDirName = "slowdir"

// SetStream sets how fast obsbench reads the server's stderr (bytes per
// second, 0: as fast as it can) and whether the server drops messages
// rather than wait when the pipe is full.
func (p *Postgres) SetStream(rate int64, lossy bool) error {
	p.stream.SetRate(rate)
	return p.stream.SetLossy(lossy)
}

// StreamLog is the file obsbench appends the server's stderr to.
func (p *Postgres) StreamLog() string { return p.stream.Path() }

// sinkDirs are a managed server's slow directories, under its temp
// directory base and owned by the OS user it runs as (cred; nil: ours).
type sinkDirs struct {
	base   string
	cred   *syscall.Credential
	log    func(format string, args ...any)
	mounts []*slowfs.Mount
}

// SinkDir is where MountSlowDir mounts the slow directory.
func (p *sinkDirs) SinkDir() string { return filepath.Join(p.base, slowDirName) }

// MountSlowDir mounts SinkDir as a slow directory whose every write waits
// delay; the server's user owns it. release unmounts it; the files
// written stay in the backing directory until Stop.
func (p *sinkDirs) MountSlowDir(ctx context.Context, delay time.Duration, capacity int64) (release func() error, err error) {
	dir, backing := p.SinkDir(), p.SinkDir()+"-data"
	for _, d := range []string{dir, backing} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		if p.cred != nil {
			if err := os.Chown(d, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
				return nil, err
			}
		}
	}
	m, err := slowfs.NewFull(dir, backing, delay, capacity)
	if err != nil {
		return nil, err
	}
	p.log("slow directory %s: %v per write", dir, delay)
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

// closeMounts unmounts this server's slow directories once it has stopped.
func (p *sinkDirs) closeMounts() error {
	var errs []string
	for _, m := range p.mounts {
		if err := m.Close(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	p.mounts = nil
	unmountAll(p.base, p.log)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// ServerFaults counts what the server lost without the workload noticing:
// writes its slow directory refused because it was full, and the server's
// own complaints on its stderr that it could not write its log. It
// returns the count so far and a description of the latest.
func (p *Postgres) ServerFaults() (int64, string) {
	n, last := p.stream.Faults()
	if r, msg := p.refused(); r > 0 {
		n, last = n+r, msg
	}
	return n, last
}

// refused counts the writes the slow directories refused because they
// were full, and describes the latest.
func (p *sinkDirs) refused() (n int64, last string) {
	for _, m := range p.mounts {
		if r := m.Refused(); r > 0 {
			n += r
			last = fmt.Sprintf("%d write(s) to the log directory %s failed: no space left on device", r, m.Dir)
		}
	}
	return n, last
}

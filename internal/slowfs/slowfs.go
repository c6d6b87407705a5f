// Package slowfs mounts a directory on a slow I/O path: a FUSE file system
// that passes everything through to a backing directory and holds every
// write for a fixed delay, one write at a time, like a slow device; it may
// also stall now and then, as a disk does in a write-back flush or a
// network volume in a hiccup.
//
// It is how obsbench reproduces "a trace file on a slow disk" on machines
// without device-mapper's dm-delay, nbd or cgroup I/O limits, as in many
// containers: FUSE needs only /dev/fuse and root, and it slows buffered
// writes too, which a block-device throttle does not.
package slowfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Mount is a mounted slow directory.
type Mount struct {
	Dir     string // the mount point: write here
	Backing string // where the data lands
	server  *fuse.Server
	dev     *device
}

// Device is how the slow path behaves. A catalog's sink reads into
// observer.SlowDevice, the same fields, which converts to it.
type Device struct {
	// Delay is how long every write takes.
	Delay time.Duration
	// Capacity, in bytes, makes writes past it fail with ENOSPC, like a
	// full disk; 0: unlimited.
	Capacity int64
	// Stall and StallEvery: for the first Stall of every StallEvery the
	// device takes no write; one sent then waits for the stall's end, and
	// every write behind it waits too. 0: never. The periods are the
	// clock's (from the Unix epoch), not the mount's: a sink mounted anew
	// for each run would otherwise stall only in its first moments, the
	// run's warm-up.
	Stall, StallEvery time.Duration
}

// device serialises writes and holds each as Device says.
type device struct {
	Device
	mu      sync.Mutex
	writes  int64
	stalled int64 // writes that waited for a stall's end
	used    int64
	refused int64 // writes failed with ENOSPC
}

func (d *device) write(n int) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.StallEvery > 0 {
		if in := time.Duration(time.Now().UnixNano()) % d.StallEvery; in < d.Stall {
			d.stalled++
			time.Sleep(d.Stall - in)
		}
	}
	time.Sleep(d.Delay)
	if d.Capacity > 0 && d.used+int64(n) > d.Capacity {
		d.refused++
		return syscall.ENOSPC
	}
	d.writes++
	d.used += int64(n)
	return 0
}

// New mounts dir as a slow view of backing: every write to a file under
// dir waits as dev says, and writes from all processes queue behind each
// other.
// Other users may use the mount (allow_other), so that a server running as
// its own user can write to it, and the kernel checks every access against
// the backing files' owners and modes (default_permissions): without that
// check, the loopback file system would serve any account that reaches
// the mount with the rights of obsbench, root. Both directories must
// exist.
func New(dir, backing string, d Device) (*Mount, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a slow directory is a FUSE mount, which needs root on this machine (/dev/fuse is root-only)")
	}
	if d.StallEvery > 0 && (d.Stall <= 0 || d.Stall >= d.StallEvery) {
		return nil, fmt.Errorf("slow directory: a stall of %v every %v leaves no time to write", d.Stall, d.StallEvery)
	}
	dev := &device{Device: d}
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		return nil, fmt.Errorf("slow directory backing %s: %w", backing, err)
	}
	root := &fs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev)}
	rootNode := &node{LoopbackNode: &fs.LoopbackNode{RootData: root}, dev: dev}
	root.RootNode = rootNode
	srv, err := fs.Mount(dir, rootNode, &fs.Options{MountOptions: fuse.MountOptions{
		AllowOther: true, DirectMountStrict: true, FsName: "obsbench-slowfs", Name: "slowfs",
		Options: []string{"default_permissions"},
	}})
	if err != nil {
		return nil, fmt.Errorf("mount slow directory %s (FUSE): %w", dir, err)
	}
	CloseFuseOnExec()
	return &Mount{Dir: dir, Backing: backing, server: srv, dev: dev}, nil
}

// Writes is how many writes the mount has delayed.
func (m *Mount) Writes() int64 {
	m.dev.mu.Lock()
	defer m.dev.mu.Unlock()
	return m.dev.writes
}

// Stalled is how many writes waited for a stall's end.
func (m *Mount) Stalled() int64 {
	m.dev.mu.Lock()
	defer m.dev.mu.Unlock()
	return m.dev.stalled
}

// Refused is how many writes failed because the device was full.
func (m *Mount) Refused() int64 {
	m.dev.mu.Lock()
	defer m.dev.mu.Unlock()
	return m.dev.refused
}

// Close unmounts. It fails while a process still has a file open under
// the mount; the caller must first make the server close its files.
func (m *Mount) Close() error {
	if m.server == nil {
		return nil
	}
	if err := m.server.Unmount(); err != nil {
		return fmt.Errorf("unmount slow directory %s: %w", m.Dir, err)
	}
	m.server = nil
	return nil
}

// Unmount detaches a mount left behind by a killed process, so that its
// directory can be removed.
func Unmount(dir string) error {
	return syscall.Unmount(dir, syscall.MNT_DETACH)
}

// node is a loopback node whose files are slow to write.
type node struct {
	*fs.LoopbackNode
	dev *device
}

var (
	_ fs.NodeOpener      = (*node)(nil)
	_ fs.NodeCreater     = (*node)(nil)
	_ fs.NodeWrapChilder = (*node)(nil)
)

// WrapChild makes every node below the root slow too.
func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	if lb, ok := ops.(*fs.LoopbackNode); ok {
		return &node{LoopbackNode: lb, dev: n.dev}
	}
	return ops
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return fh, fl, errno
	}
	lf, ok := fh.(*fs.LoopbackFile)
	if !ok {
		return fh, fl, 0
	}
	return &file{LoopbackFile: lf, dev: n.dev}, fl, 0
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	in, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return in, fh, fl, errno
	}
	if lf, ok := fh.(*fs.LoopbackFile); ok {
		fh = &file{LoopbackFile: lf, dev: n.dev}
	}
	return in, fh, fl, 0
}

// file delays its writes.
type file struct {
	*fs.LoopbackFile
	dev *device
}

var _ fs.FileWriter = (*file)(nil)

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if errno := f.dev.write(len(data)); errno != 0 {
		return 0, errno
	}
	return f.LoopbackFile.Write(ctx, data, off)
}

// PassthroughFd refuses the kernel's FUSE passthrough, which would send
// reads and writes straight to the backing file, past the delay.
func (f *file) PassthroughFd() (int, bool) { return -1, false }

// CloseFuseOnExec marks every /dev/fuse descriptor of this process
// close-on-exec. go-fuse opens more than one (a reader per thread), not all
// of them close-on-exec, and a server started afterwards (pg_ctl restart)
// would otherwise inherit them: server processes holding the connection
// to obsbench's file system. go-fuse may open more readers later, so it
// is also called right before a server is started.
func CloseFuseOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == "/dev/fuse" {
			syscall.CloseOnExec(fd)
		}
	}
}

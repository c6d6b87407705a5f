package server

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// peerUID is the OS user that owns the other end of an accepted loopback
// TCP connection. The kernel's socket-diagnosis interface (sock_diag(7),
// what ss(8) reads) is asked for the one socket with the peer's address
// as its local one and ours as its remote one; its answer names the user
// that created it. Where that interface is missing, the socket table in
// /proc/net/tcp is searched instead.
func peerUID(c net.Conn) (int, error) {
	local, remote, err := loopbackEnds(c)
	if err != nil {
		return 0, err
	}
	uid, diagErr := diagPeer(local, remote)
	if diagErr == nil {
		return uid, nil
	}
	// /proc/net/tcp is read in several reads, not at one instant: a
	// socket can be missed while others come and go (which the single
	// look-up above cannot), so it is read twice.
	uid, err = lookupPeer(local, remote)
	if err != nil {
		uid, err = lookupPeer(local, remote)
	}
	if err != nil {
		return 0, fmt.Errorf("%w (sock_diag: %v)", err, diagErr)
	}
	return uid, nil
}

// loopbackEnds are an accepted connection's two addresses, refused
// unless the peer is on this machine.
func loopbackEnds(c net.Conn) (local, remote netip.AddrPort, err error) {
	l, ok1 := c.LocalAddr().(*net.TCPAddr)
	r, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return local, remote, errors.New("not a TCP connection")
	}
	local, remote = unmap(l.AddrPort()), unmap(r.AddrPort())
	if !remote.Addr().IsLoopback() {
		return local, remote, fmt.Errorf("peer %v is not on this machine", remote)
	}
	return local, remote, nil
}

// lookupPeer searches /proc/net/tcp{,6} for the socket from r (the
// peer) to l (ours) and returns its uid column.
func lookupPeer(l, r netip.AddrPort) (int, error) {
	table := "/proc/net/tcp"
	if !r.Addr().Is4() {
		table = "/proc/net/tcp6"
	}
	f, err := os.Open(table)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		from, err1 := parseProcAddr(fields[1])
		to, err2 := parseProcAddr(fields[2])
		if err1 != nil || err2 != nil || from != r || to != l {
			continue
		}
		return strconv.Atoi(fields[7])
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no socket %v -> %v in %s", r, l, table)
}

func unmap(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// parseProcAddr reads an address of /proc/net/tcp{,6}: the address in hex
// as the kernel stores it (32-bit words in host order, little-endian
// here), a colon, the port in hex.
func parseProcAddr(s string) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("address %q", s)
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("address %q", s)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port %q", s)
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}

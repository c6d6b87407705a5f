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
// TCP connection: the client's socket is in this machine's socket table
// (/proc/net/tcp) with the peer's address as its local one and ours as
// its remote one, and its uid column is the user that created it.
func peerUID(c net.Conn) (int, error) {
	uid, err := lookupPeer(c)
	if err != nil {
		// The kernel's table is read in several reads, not at one
		// instant: a socket can be missed while others come and go.
		uid, err = lookupPeer(c)
	}
	return uid, err
}

func lookupPeer(c net.Conn) (int, error) {
	local, ok1 := c.LocalAddr().(*net.TCPAddr)
	remote, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return 0, errors.New("not a TCP connection")
	}
	l, r := local.AddrPort(), remote.AddrPort()
	if !r.Addr().Unmap().IsLoopback() {
		return 0, fmt.Errorf("peer %v is not on this machine", r)
	}
	table := "/proc/net/tcp"
	if !r.Addr().Unmap().Is4() {
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
		if err1 != nil || err2 != nil || from != unmap(r) || to != unmap(l) {
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

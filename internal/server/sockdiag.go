package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// The layouts of linux/inet_diag.h: a netlink header, then a request
// naming one socket by its four-tuple; the answer is a header and an
// inet_diag_msg, whose uid field is the socket's creator.
const (
	nlmsgHeaderLen   = 16
	inetDiagReqLen   = 56 // struct inet_diag_req_v2
	inetDiagMsgLen   = 72 // struct inet_diag_msg
	inetDiagMsgUID   = 64 // offset of idiag_uid in inet_diag_msg
	inetDiagSockID   = 8  // offset of the socket id in inet_diag_req_v2
	inetDiagNoCookie = ^uint32(0)
)

// diagPeer asks the kernel (sock_diag(7), NETLINK_SOCK_DIAG) for the TCP
// socket at the other end of a connection between ours and peer (its
// local address is peer, its remote one ours), and returns the uid that
// owns it. Unlike a read of /proc/net/tcp, the
// look-up is one hash-table search in the kernel: it cannot miss the
// socket because other sockets open and close meanwhile.
func diagPeer(ours, peer netip.AddrPort) (int, error) {
	if peer.Addr().Is4() != ours.Addr().Is4() {
		return 0, fmt.Errorf("sock_diag: addresses %v and %v of different families", peer, ours)
	}
	// Addresses as the kernel's idiag_src and idiag_dst hold them: 16
	// bytes, an IPv4 address in the first 4.
	family, src, dst := byte(unix.AF_INET6), peer.Addr().As16(), ours.Addr().As16()
	if peer.Addr().Is4() {
		family, src, dst = unix.AF_INET, [16]byte{}, [16]byte{}
		a, b := peer.Addr().As4(), ours.Addr().As4()
		copy(src[:], a[:])
		copy(dst[:], b[:])
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("sock_diag: %w", err)
	}
	defer unix.Close(fd)

	req := make([]byte, nlmsgHeaderLen+inetDiagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST) // not a dump: one socket
	ne.PutUint32(req[8:], 1)                  // sequence number
	d := req[nlmsgHeaderLen:]
	d[0], d[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(d[4:], ^uint32(0)) // every state
	id := d[inetDiagSockID:]
	binary.BigEndian.PutUint16(id[0:], peer.Port())
	binary.BigEndian.PutUint16(id[2:], ours.Port())
	copy(id[4:20], src[:])
	copy(id[20:36], dst[:])
	ne.PutUint32(id[40:], inetDiagNoCookie)
	ne.PutUint32(id[44:], inetDiagNoCookie)

	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("sock_diag: %w", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, fmt.Errorf("sock_diag: %w", err)
	}
	return parseDiagAnswer(buf[:n])
}

// parseDiagAnswer reads the kernel's answer to diagPeer's request: the
// socket's inet_diag_msg, or an error message.
func parseDiagAnswer(b []byte) (int, error) {
	ne := binary.NativeEndian
	if len(b) < nlmsgHeaderLen {
		return 0, fmt.Errorf("sock_diag: short answer (%d bytes)", len(b))
	}
	body := b[nlmsgHeaderLen:]
	switch ne.Uint16(b[4:]) {
	case unix.NLMSG_ERROR:
		if len(body) < 4 {
			return 0, errors.New("sock_diag: short error answer")
		}
		if errno := int32(ne.Uint32(body)); errno != 0 {
			return 0, fmt.Errorf("sock_diag: %w", unix.Errno(-errno))
		}
		return 0, errors.New("sock_diag: acknowledged, no socket")
	case unix.SOCK_DIAG_BY_FAMILY:
		if len(body) < inetDiagMsgLen {
			return 0, fmt.Errorf("sock_diag: short socket answer (%d bytes)", len(body))
		}
		return int(ne.Uint32(body[inetDiagMsgUID:])), nil
	default:
		return 0, fmt.Errorf("sock_diag: answer of type %d", ne.Uint16(b[4:]))
	}
}

//go:build unix

package transport

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// setBuffers asks for the buffer sizes, first past the system limit where
// the process is privileged to, and reads back what the OS granted.
func setBuffers(conn *net.UDPConn, rc syscall.RawConn, read, write int) (gotRead, gotWrite int, err error) {
	var sockErr error
	err = rc.Control(func(fd uintptr) {
		forceBuffers(int(fd), read, write)
	})
	if err != nil {
		return 0, 0, err
	}
	// Where forcing failed, ask within the limit; the OS clamps silently.
	if err := conn.SetReadBuffer(read); err != nil {
		return 0, 0, err
	}
	if err := conn.SetWriteBuffer(write); err != nil {
		return 0, 0, err
	}
	err = rc.Control(func(fd uintptr) {
		gotRead, sockErr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		if sockErr != nil {
			return
		}
		gotWrite, sockErr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	})
	if err == nil {
		err = sockErr
	}
	return gotRead, gotWrite, err
}

func setDSCP(rc syscall.RawConn, family addressFamily, dscp int) error {
	tos := dscp << 2 // DSCP is the top six bits of the TOS / traffic class byte
	var sockErr error
	err := rc.Control(func(fd uintptr) {
		if family == familyIPv4 {
			sockErr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, tos)
			return
		}
		sockErr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_TCLASS, tos)
		if sockErr == nil {
			// A dual-stack socket sends IPv4 too; some systems refuse IP_TOS
			// on an IPv6 socket, and then only IPv6 traffic is marked.
			_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, tos)
		}
	})
	if err == nil {
		err = sockErr
	}
	return err
}

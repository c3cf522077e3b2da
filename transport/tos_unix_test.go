//go:build unix

package transport

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// socketTOS reads back the TOS (IPv4) or traffic class (IPv6) byte.
func socketTOS(rc syscall.RawConn, family addressFamily) (int, error) {
	var tos int
	var sockErr error
	err := rc.Control(func(fd uintptr) {
		if family == familyIPv4 {
			tos, sockErr = unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS)
		} else {
			tos, sockErr = unix.GetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_TCLASS)
		}
	})
	if err == nil {
		err = sockErr
	}
	return tos, err
}

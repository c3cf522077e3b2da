//go:build !unix

package transport

import (
	"errors"
	"net"
	"syscall"
)

var errUnsupported = errors.New("transport: not supported on this platform")

// setBuffers asks for the sizes but cannot read back what was granted; it
// reports 0.
func setBuffers(conn *net.UDPConn, rc syscall.RawConn, read, write int) (int, int, error) {
	if err := conn.SetReadBuffer(read); err != nil {
		return 0, 0, err
	}
	if err := conn.SetWriteBuffer(write); err != nil {
		return 0, 0, err
	}
	return 0, 0, nil
}

func setDSCP(rc syscall.RawConn, family addressFamily, dscp int) error {
	return errUnsupported
}

package transport

import "golang.org/x/sys/unix"

// forceBuffers uses SO_RCVBUFFORCE and SO_SNDBUFFORCE, which exceed
// net.core.rmem_max and wmem_max but need CAP_NET_ADMIN. Failure is
// expected for unprivileged processes; setBuffers then asks normally.
func forceBuffers(fd, read, write int) {
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, read)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, write)
}

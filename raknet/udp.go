package raknet

import (
	"net"
	"net/netip"
	"time"
)

// udpConn adapts a *net.UDPConn to transport.Conn for Ping's own socket.
// It exists only until package transport's UDP endpoint is available to
// replace it.
type udpConn struct{ c *net.UDPConn }

func listenUDP(network string) (*udpConn, error) {
	c, err := net.ListenUDP(network, nil)
	if err != nil {
		return nil, err
	}
	return &udpConn{c}, nil
}

func (u *udpConn) ReadFrom(p []byte) (int, netip.AddrPort, error) {
	n, from, err := u.c.ReadFromUDPAddrPort(p)
	return n, netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), err
}

func (u *udpConn) WriteTo(p []byte, to netip.AddrPort) error {
	_, err := u.c.WriteToUDPAddrPort(p, to)
	return err
}

func (u *udpConn) LocalAddr() netip.AddrPort {
	a := u.c.LocalAddr().(*net.UDPAddr).AddrPort()
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

func (u *udpConn) SetReadDeadline(t time.Time) error { return u.c.SetReadDeadline(t) }
func (u *udpConn) Close() error                      { return u.c.Close() }

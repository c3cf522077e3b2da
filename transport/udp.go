package transport

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// DefaultSocketBuffer is the receive and send buffer size ListenUDP asks
// for when UDPConfig leaves it at 0. Bursts of game traffic at high tick
// rates overflow the usual 200 KiB defaults.
const DefaultSocketBuffer = 4 << 20

// ErrBadDSCP is returned (wrapped) by ListenUDP for a DSCP outside 0..63.
var ErrBadDSCP = errors.New("transport: DSCP must be in 0..63")

// UDPConfig configures ListenUDP. The zero value is ready to use.
type UDPConfig struct {
	// ReadBuffer and WriteBuffer are the socket buffer sizes to ask for, in
	// bytes; 0 means DefaultSocketBuffer. The OS may grant less (on Linux,
	// net.core.rmem_max and wmem_max cap them unless the process has
	// CAP_NET_ADMIN); UDPConn.Buffers reports what it granted.
	ReadBuffer, WriteBuffer int
	// DSCP marks outgoing datagrams with this Differentiated Services code
	// point (0..63), for example 46 for Expedited Forwarding. It is set with
	// IP_TOS and, on IPv6 sockets, IPV6_TCLASS where the OS supports them.
	// 0 leaves the marking alone.
	DSCP int
	// Logger receives debug messages about socket setup and a warning when
	// the OS grants smaller buffers than asked. The zero value is silent.
	Logger zerolog.Logger
}

// UDPConn is a UDP socket implementing Conn. It follows the Conn contract;
// in addition, source addresses of IPv4 datagrams received on a dual-stack
// socket are reported as plain IPv4 (Unmap), and destinations may be given
// either way.
type UDPConn struct {
	conn        *net.UDPConn
	local       netip.AddrPort
	ipv4Only    bool // an AF_INET socket: destinations must be IPv4
	readBuffer  int
	writeBuffer int
	closed      atomic.Bool
}

var _ Conn = (*UDPConn)(nil)

// ListenUDP opens a UDP socket. network is "udp", "udp4" or "udp6", as for
// net.ListenUDP; "udp" with an unspecified or empty host ("[::]:0", ":0",
// and "0.0.0.0:0" too) gives a dual-stack socket that receives both IPv4
// and IPv6 where the system allows it. LocalAddr reports the wildcard that
// was asked for: 0.0.0.0 for "0.0.0.0:0", [::] for the others.
func ListenUDP(network, address string, cfg UDPConfig) (*UDPConn, error) {
	switch network {
	case "udp", "udp4", "udp6":
	default:
		return nil, fmt.Errorf("transport: listen %s %s: %w", network, address, net.UnknownNetworkError(network))
	}
	if cfg.DSCP < 0 || cfg.DSCP > 63 {
		return nil, fmt.Errorf("transport: listen %s %s: %w (got %d)", network, address, ErrBadDSCP, cfg.DSCP)
	}
	laddr, err := net.ResolveUDPAddr(network, address)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenUDP(network, laddr)
	if err != nil {
		return nil, err
	}
	c := &UDPConn{conn: conn, local: localAddr(network, laddr, conn)}
	if err := c.setup(cfg); err != nil {
		conn.Close()
		return nil, fmt.Errorf("transport: listen %s %s: %w", network, address, err)
	}
	return c, nil
}

func (c *UDPConn) setup(cfg UDPConfig) error {
	log := cfg.Logger
	rc, err := c.conn.SyscallConn()
	if err != nil {
		return err
	}
	// Go opens an AF_INET socket exactly when the bound address is IPv4.
	family := familyIPv6
	if c.conn.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Is4() {
		family = familyIPv4
	}
	c.ipv4Only = family == familyIPv4

	want := func(v int) int {
		if v <= 0 {
			return DefaultSocketBuffer
		}
		return v
	}
	wantRead, wantWrite := want(cfg.ReadBuffer), want(cfg.WriteBuffer)
	c.readBuffer, c.writeBuffer, err = setBuffers(c.conn, rc, wantRead, wantWrite)
	if err != nil {
		return err
	}
	if c.readBuffer < wantRead || c.writeBuffer < wantWrite {
		log.Warn().Int("read", c.readBuffer).Int("write", c.writeBuffer).
			Int("wantRead", wantRead).Int("wantWrite", wantWrite).
			Msg("transport: OS granted smaller UDP socket buffers than asked (raise net.core.rmem_max/wmem_max)")
	}
	if cfg.DSCP != 0 {
		if err := setDSCP(rc, family, cfg.DSCP); err != nil {
			return err
		}
	}
	log.Debug().Stringer("addr", c.local).Int("readBuffer", c.readBuffer).
		Int("writeBuffer", c.writeBuffer).Int("dscp", cfg.DSCP).Msg("transport: UDP socket open")
	return nil
}

// Buffers reports the socket buffer sizes the OS granted, as read back with
// getsockopt, or 0 where the platform cannot tell. Linux reports twice the
// usable size, since it counts its bookkeeping overhead too.
func (c *UDPConn) Buffers() (read, write int) { return c.readBuffer, c.writeBuffer }

// LocalAddr returns the bound address. An IPv4 address is reported as plain
// IPv4 even on a dual-stack socket, and a socket asked for the IPv4
// wildcard reports 0.0.0.0 (see localAddr).
func (c *UDPConn) LocalAddr() netip.AddrPort { return c.local }

// localAddr is the address a socket opened by ListenUDP reports. For
// network "udp" Go binds any wildcard, 0.0.0.0 included, as a dual-stack
// [::] socket where the system allows it; the socket then reports [::]
// though the caller asked for 0.0.0.0. The caller's 0.0.0.0 is reported
// instead, as it reads in logs and as a host:port to check against. The
// socket stays dual-stack, as the net package makes it.
func localAddr(network string, requested *net.UDPAddr, conn *net.UDPConn) netip.AddrPort {
	bound := normalizeAddrPort(conn.LocalAddr().(*net.UDPAddr).AddrPort())
	asked := requested.AddrPort().Addr().Unmap()
	if network == "udp" && asked.Is4() && asked.IsUnspecified() && bound.Addr().Is6() && bound.Addr().IsUnspecified() {
		return netip.AddrPortFrom(asked, bound.Port())
	}
	return bound
}

// ReadFrom reads one datagram. It does not allocate.
func (c *UDPConn) ReadFrom(p []byte) (int, netip.AddrPort, error) {
	n, from, err := c.conn.ReadFromUDPAddrPort(p)
	if err != nil {
		return 0, netip.AddrPort{}, err
	}
	return n, normalizeAddrPort(from), nil
}

// WriteTo sends p as one datagram. It does not allocate.
func (c *UDPConn) WriteTo(p []byte, to netip.AddrPort) error {
	if c.ipv4Only {
		to = normalizeAddrPort(to)
	}
	_, err := c.conn.WriteToUDPAddrPort(p, to)
	return err
}

// SetReadDeadline sets the read deadline, as net.Conn does.
func (c *UDPConn) SetReadDeadline(t time.Time) error { return c.conn.SetReadDeadline(t) }

// Close closes the socket. Calls after the first return nil.
func (c *UDPConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	return c.conn.Close()
}

// UDP returns the underlying socket, for options this package does not
// cover. Reading or writing through it bypasses the address normalisation.
func (c *UDPConn) UDP() *net.UDPConn { return c.conn }

func normalizeAddrPort(a netip.AddrPort) netip.AddrPort {
	if a.Addr().Is4In6() {
		return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
	}
	return a
}

type addressFamily int

const (
	familyIPv4 addressFamily = iota
	familyIPv6
)

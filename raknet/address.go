package raknet

import (
	"encoding/binary"
	"net/netip"
	"strconv"
)

// RakNet writes a SystemAddress as an IP version byte followed by either an
// IPv4 address with every octet bit-inverted, or the raw bytes of the
// sender's sockaddr_in6.
const (
	addressLen4 = 1 + 4 + 2
	addressLen6 = 1 + 2 + 2 + 4 + 16 + 4
)

// The sockaddr_in6 family field is little-endian and holds the sender's
// AF_INET6, which differs between systems. Readers of the original library
// and go-raknet ignore it; go-raknet and Windows builds of Bedrock write 23.
const (
	afInet6Linux   = 10
	afInet6Windows = 23
	afInet6FreeBSD = 28
	afInet6Darwin  = 30
)

// Address is a netip.AddrPort in RakNet's SystemAddress encoding, so that
// an address field has the same Append, Parse and Len as every message.
// Messages keep their address fields as netip.AddrPort, which converts to
// and from Address for free.
type Address netip.AddrPort

// String formats a as netip.AddrPort does.
func (a Address) String() string { return netip.AddrPort(a).String() }

// Len is the number of bytes Append writes for a.
func (a *Address) Len() int { return addressLen(netip.AddrPort(*a)) }

// Append appends a in RakNet's address encoding. IPv4 and IPv4-mapped
// IPv6 addresses take the 7-byte IPv4 form; other IPv6 addresses take the
// 29-byte form with address family 23, flow info 0 and the zone, if it is
// a number, as scope id. The zero Address is written as 0.0.0.0:0, which
// is how the original library writes an unassigned address. Every address
// encodes; the error is always nil.
func (a *Address) Append(b []byte) ([]byte, error) {
	return appendAddress(b, netip.AddrPort(*a)), nil
}

// ParseAddress reads one address from the start of b into a. It accepts
// the IPv6 address family of Linux (10), Windows (23), FreeBSD (28) and
// macOS (30), ignores the flow info, turns a non-zero scope id into a
// numeric zone, and unmaps IPv4-mapped IPv6 addresses so that every IPv4
// address compares equal however it was sent.
func ParseAddress(b []byte, a *Address) (int, error) {
	ap, n, err := parseAddress(b)
	if err != nil {
		return 0, err
	}
	*a = Address(ap)
	return n, nil
}

func addressLen(a netip.AddrPort) int {
	if a.Addr().Is6() && !a.Addr().Is4In6() {
		return addressLen6
	}
	return addressLen4
}

func appendAddress(b []byte, a netip.AddrPort) []byte {
	ip := a.Addr().Unmap()
	switch {
	case ip.Is4():
		v := ip.As4()
		b = append(b, 4, ^v[0], ^v[1], ^v[2], ^v[3])
		return appendU16(b, a.Port())
	case ip.Is6():
		b = append(b, 6)
		b = binary.LittleEndian.AppendUint16(b, afInet6Windows)
		b = appendU16(b, a.Port())
		b = appendU32(b, 0) // flow info
		v := ip.As16()
		b = append(b, v[:]...)
		var scope uint32
		if z, err := strconv.ParseUint(ip.Zone(), 10, 32); err == nil {
			scope = uint32(z)
		}
		return appendU32(b, scope)
	default:
		return append(b, 4, 0xff, 0xff, 0xff, 0xff, 0, 0)
	}
}

// parseAddress is ParseAddress for the message parsers, which hold their
// addresses as netip.AddrPort.
func parseAddress(b []byte) (netip.AddrPort, int, error) {
	if len(b) == 0 {
		return netip.AddrPort{}, 0, ErrShortMessage
	}
	switch b[0] {
	case 4:
		if len(b) < addressLen4 {
			return netip.AddrPort{}, 0, ErrShortMessage
		}
		ip := netip.AddrFrom4([4]byte{^b[1], ^b[2], ^b[3], ^b[4]})
		return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[5:])), addressLen4, nil
	case 6:
		if len(b) < addressLen6 {
			return netip.AddrPort{}, 0, ErrShortMessage
		}
		switch binary.LittleEndian.Uint16(b[1:]) {
		case afInet6Linux, afInet6Windows, afInet6FreeBSD, afInet6Darwin:
		default:
			return netip.AddrPort{}, 0, ErrBadAddress
		}
		port := binary.BigEndian.Uint16(b[3:])
		ip := netip.AddrFrom16([16]byte(b[9:25]))
		if ip.Is4In6() {
			ip = ip.Unmap()
		} else if scope := binary.BigEndian.Uint32(b[25:]); scope != 0 {
			ip = ip.WithZone(strconv.FormatUint(uint64(scope), 10))
		}
		return netip.AddrPortFrom(ip, port), addressLen6, nil
	}
	return netip.AddrPort{}, 0, ErrBadAddress
}

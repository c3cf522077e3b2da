package netcode

import (
	"encoding/binary"
	"net/netip"
)

// Address types on the wire.
const (
	addressIPv4 = 1
	addressIPv6 = 2
)

// addressLen is the encoded size of a: 7 bytes for IPv4, 19 for IPv6, or 0
// if a cannot be encoded.
func addressLen(a netip.AddrPort) int {
	switch {
	case !a.IsValid():
		return 0
	case a.Addr().Is4():
		return 1 + 4 + 2
	default:
		return 1 + 16 + 2
	}
}

// appendAddress encodes a: a type byte, the address (IPv4 as 4 octets, IPv6
// as 8 little-endian u16 groups), then the port little-endian. An IPv6 zone
// is not representable and is dropped; an IPv4-mapped IPv6 address stays
// IPv6, because that is the address a dual-stack socket reports.
func appendAddress(b []byte, a netip.AddrPort) ([]byte, error) {
	if !a.IsValid() {
		return b, ErrAddress
	}
	ip := a.Addr()
	if ip.Is4() {
		v4 := ip.As4()
		b = append(b, addressIPv4)
		b = append(b, v4[:]...)
	} else {
		v6 := ip.As16()
		b = append(b, addressIPv6)
		for i := 0; i < 16; i += 2 {
			// The group a:b:c:.. is big-endian in As16 and little-endian on the wire.
			b = append(b, v6[i+1], v6[i])
		}
	}
	return binary.LittleEndian.AppendUint16(b, a.Port()), nil
}

// parseAddress decodes one address from the front of b and reports how many
// bytes it used. Types other than 1 (IPv4) and 2 (IPv6) are rejected.
func parseAddress(b []byte) (netip.AddrPort, int, error) {
	if len(b) < 1 {
		return netip.AddrPort{}, 0, ErrAddress
	}
	switch b[0] {
	case addressIPv4:
		if len(b) < 7 {
			return netip.AddrPort{}, 0, ErrAddress
		}
		ip := netip.AddrFrom4([4]byte(b[1:5]))
		return netip.AddrPortFrom(ip, binary.LittleEndian.Uint16(b[5:7])), 7, nil
	case addressIPv6:
		if len(b) < 19 {
			return netip.AddrPort{}, 0, ErrAddress
		}
		var v6 [16]byte
		for i := 0; i < 16; i += 2 {
			v6[i], v6[i+1] = b[1+i+1], b[1+i]
		}
		return netip.AddrPortFrom(netip.AddrFrom16(v6), binary.LittleEndian.Uint16(b[17:19])), 19, nil
	default:
		return netip.AddrPort{}, 0, ErrAddress
	}
}

// sameAddress reports whether a and b name the same endpoint, treating an
// IPv4-mapped IPv6 address as the IPv4 address it maps and ignoring zones
// (which the wire format cannot carry).
func sameAddress(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap().WithZone("") == b.Addr().Unmap().WithZone("")
}

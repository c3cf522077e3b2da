package netcode

import (
	"encoding/binary"
	"net/netip"
)

// Addresses are not a message of their own: they appear only in the
// connect tokens' address lists, so their encoding stays unexported and
// the tokens' Append and Parse carry them.

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

// addresses reads an address list as appendAddressList writes it,
// appending the addresses to dst.
func (r *reader) addresses(dst []netip.AddrPort) ([]netip.AddrPort, error) {
	n := r.u32()
	if r.err != nil {
		return dst, r.err
	}
	if n < 1 || n > MaxServersPerConnect {
		return dst, ErrServerAddressCount
	}
	for range n {
		a, used, err := parseAddress(r.b)
		if err != nil {
			return dst, err
		}
		r.b = r.b[used:]
		dst = append(dst, a)
	}
	return dst, nil
}

// appendAddressList appends the tokens' address list: a u32 count in
// [1,32], then each address.
func appendAddressList(b []byte, list []netip.AddrPort) ([]byte, error) {
	if len(list) < 1 || len(list) > MaxServersPerConnect {
		return b, ErrServerAddressCount
	}
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(list)))
	var err error
	for _, a := range list {
		if b, err = appendAddress(b, a); err != nil {
			return b[:start], err
		}
	}
	return b, nil
}

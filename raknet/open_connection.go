package raknet

import (
	"encoding/binary"
	"net/netip"
	"slices"
)

// OpenConnectionRequest1 starts the open-connection handshake and probes
// the path MTU: the datagram is zero-padded so that its UDP payload plus
// UDPHeaderSize equals MTU. Layout: id, magic, u8 protocol, padding.
type OpenConnectionRequest1 struct {
	Protocol uint8
	// MTU is the size being probed. RakNet clients try MaxMTU, 1200 and
	// 576 in turn.
	MTU uint16
}

const openConnectionRequest1MinLen = 1 + 16 + 1

// MinProbeMTU is the smallest MTU an open connection request 1 can carry.
const MinProbeMTU = openConnectionRequest1MinLen + UDPHeaderSize

// Len is the encoded size of r: MTU minus UDPHeaderSize.
func (r *OpenConnectionRequest1) Len() int { return int(r.MTU) - UDPHeaderSize }

// Append appends the padded request to b. It fails with ErrBadMTU when MTU
// is below MinProbeMTU.
func (r *OpenConnectionRequest1) Append(b []byte) ([]byte, error) {
	if r.MTU < MinProbeMTU {
		return b, ErrBadMTU
	}
	b = append(b, IDOpenConnectionRequest1)
	b = append(b, offlineMagic[:]...)
	b = append(b, r.Protocol)
	pad := r.Len() - openConnectionRequest1MinLen
	b = slices.Grow(b, pad)
	b = b[:len(b)+pad]
	clear(b[len(b)-pad:])
	return b, nil
}

// ParseOpenConnectionRequest1 decodes a request 1 into r. The padding is
// part of the message, so it uses all of b: the MTU is the datagram's
// length. Like the original library, it does not inspect the padding.
func ParseOpenConnectionRequest1(b []byte, r *OpenConnectionRequest1) (int, error) {
	if err := checkHeader(b, IDOpenConnectionRequest1, 1, openConnectionRequest1MinLen); err != nil {
		return 0, err
	}
	if len(b)+UDPHeaderSize > 0xffff {
		return 0, ErrBadMTU
	}
	*r = OpenConnectionRequest1{Protocol: b[17], MTU: uint16(len(b) + UDPHeaderSize)}
	return len(b), nil
}

// OpenConnectionReply1 answers request 1. Layout: id, magic, u64 BE server
// GUID, u8 security, u32 BE cookie only when security is set, u16 BE MTU.
type OpenConnectionReply1 struct {
	ServerGUID uint64
	// HasCookie is the "server has security" byte. Bedrock-style servers
	// (and go-raknet) set it to make the client echo Cookie in request 2,
	// which proves the client can receive at its source address.
	HasCookie bool
	Cookie    uint32
	// MTU is the probe size the server accepted, capped at its own limit.
	MTU uint16
}

const (
	openConnectionReply1Len = 1 + 16 + 8 + 1 + 2
	// The original library with libcat security sends a 294-byte public
	// key between the cookie and the MTU.
	libcatPublicKeyLen = 294
)

// Len is the encoded size of r.
func (r *OpenConnectionReply1) Len() int {
	if r.HasCookie {
		return openConnectionReply1Len + 4
	}
	return openConnectionReply1Len
}

// Append appends the encoded reply to b. Every reply encodes; the error is
// always nil.
func (r *OpenConnectionReply1) Append(b []byte) ([]byte, error) {
	b = append(b, IDOpenConnectionReply1)
	b = append(b, offlineMagic[:]...)
	b = appendU64(b, r.ServerGUID)
	if r.HasCookie {
		b = append(b, 1)
		b = appendU32(b, r.Cookie)
	} else {
		b = append(b, 0)
	}
	return appendU16(b, r.MTU), nil
}

// ParseOpenConnectionReply1 decodes a reply 1 into r. A reply that
// carries a libcat public key yields ErrSecurityUnsupported.
func ParseOpenConnectionReply1(b []byte, r *OpenConnectionReply1) (int, error) {
	if err := checkHeader(b, IDOpenConnectionReply1, 1, openConnectionReply1Len); err != nil {
		return 0, err
	}
	hasCookie := b[25] != 0
	var cookie uint32
	off := 26
	if hasCookie {
		if len(b) >= openConnectionReply1Len+4+libcatPublicKeyLen {
			return 0, ErrSecurityUnsupported
		}
		if len(b) < openConnectionReply1Len+4 {
			return 0, ErrShortMessage
		}
		cookie = binary.BigEndian.Uint32(b[off:])
		off += 4
	}
	*r = OpenConnectionReply1{
		ServerGUID: binary.BigEndian.Uint64(b[17:]),
		HasCookie:  hasCookie,
		Cookie:     cookie,
		MTU:        binary.BigEndian.Uint16(b[off:]),
	}
	return off + 2, nil
}

// CookieMode tells ParseOpenConnectionRequest2 whether a cookie precedes
// the server address.
type CookieMode uint8

const (
	// CookieDetect works the cookie out from the message length: the four
	// layouts (with or without cookie, IPv4 or IPv6 server address) have
	// four different lengths. Trailing bytes are then not allowed.
	CookieDetect CookieMode = iota
	// CookieAbsent is for a server that sent no security flag in reply 1.
	CookieAbsent
	// CookiePresent is for a server that sent a cookie in reply 1.
	CookiePresent
)

// OpenConnectionRequest2 completes the open-connection handshake. Layout:
// id, magic, [u32 BE cookie, u8 challenge flag], server address, u16 BE
// MTU, u64 BE client GUID. The cookie and flag are present exactly when
// reply 1 had its security byte set.
type OpenConnectionRequest2 struct {
	HasCookie     bool
	Cookie        uint32
	ServerAddress netip.AddrPort
	MTU           uint16
	ClientGUID    uint64
}

// Len is the encoded size of r.
func (r *OpenConnectionRequest2) Len() int {
	n := 1 + 16 + addressLen(r.ServerAddress) + 2 + 8
	if r.HasCookie {
		n += 5
	}
	return n
}

// Append appends the encoded request to b. With a cookie it writes a zero
// challenge flag, as the original library does when it has no libcat
// challenge to send. Every request encodes; the error is always nil.
func (r *OpenConnectionRequest2) Append(b []byte) ([]byte, error) {
	b = append(b, IDOpenConnectionRequest2)
	b = append(b, offlineMagic[:]...)
	if r.HasCookie {
		b = appendU32(b, r.Cookie)
		b = append(b, 0)
	}
	b = appendAddress(b, r.ServerAddress)
	b = appendU16(b, r.MTU)
	return appendU64(b, r.ClientGUID), nil
}

// ParseOpenConnectionRequest2 decodes a request 2 into r; mode says
// whether a cookie precedes the server address. A non-zero challenge flag
// (a libcat handshake challenge follows) yields ErrSecurityUnsupported.
func ParseOpenConnectionRequest2(b []byte, mode CookieMode, r *OpenConnectionRequest2) (int, error) {
	const fixed = 1 + 16 + 2 + 8
	if err := checkHeader(b, IDOpenConnectionRequest2, 1, 1+16); err != nil {
		return 0, err
	}
	var hasCookie bool
	switch mode {
	case CookieAbsent:
	case CookiePresent:
		hasCookie = true
	case CookieDetect:
		switch len(b) {
		case fixed + addressLen4, fixed + addressLen6:
		case fixed + 5 + addressLen4, fixed + 5 + addressLen6:
			hasCookie = true
		default:
			return 0, ErrBadLength
		}
	default:
		return 0, ErrBadLength
	}
	var cookie uint32
	off := 17
	if hasCookie {
		if len(b) < off+5 {
			return 0, ErrShortMessage
		}
		cookie = binary.BigEndian.Uint32(b[off:])
		if b[off+4] != 0 {
			return 0, ErrSecurityUnsupported
		}
		off += 5
	}
	addr, n, err := parseAddress(b[off:])
	if err != nil {
		return 0, err
	}
	off += n
	if len(b) < off+10 {
		return 0, ErrShortMessage
	}
	if mode == CookieDetect && len(b) != off+10 {
		return 0, ErrBadLength
	}
	*r = OpenConnectionRequest2{
		HasCookie:     hasCookie,
		Cookie:        cookie,
		ServerAddress: addr,
		MTU:           binary.BigEndian.Uint16(b[off:]),
		ClientGUID:    binary.BigEndian.Uint64(b[off+2:]),
	}
	return off + 10, nil
}

// OpenConnectionReply2 accepts the connection. Layout: id, magic, u64 BE
// server GUID, client address, u16 BE MTU, encryption flag.
type OpenConnectionReply2 struct {
	ServerGUID    uint64
	ClientAddress netip.AddrPort
	MTU           uint16
	// Encryption asks for the original library's libcat encryption, which
	// this package does not implement; a client refuses such a reply.
	Encryption bool
}

// Len is the encoded size of r.
func (r *OpenConnectionReply2) Len() int {
	return 1 + 16 + 8 + addressLen(r.ClientAddress) + 2 + 1
}

// Append appends the encoded reply to b. The original library writes the
// encryption flag as a single bit padded to a byte, so true is 0x80; every
// known reader takes any non-zero byte as true. Every reply encodes; the
// error is always nil.
func (r *OpenConnectionReply2) Append(b []byte) ([]byte, error) {
	b = append(b, IDOpenConnectionReply2)
	b = append(b, offlineMagic[:]...)
	b = appendU64(b, r.ServerGUID)
	b = appendAddress(b, r.ClientAddress)
	b = appendU16(b, r.MTU)
	if r.Encryption {
		return append(b, 0x80), nil
	}
	return append(b, 0), nil
}

// ParseOpenConnectionReply2 decodes a reply 2 into r. Bytes after the
// encryption flag (a libcat answer) are left unread.
func ParseOpenConnectionReply2(b []byte, r *OpenConnectionReply2) (int, error) {
	if err := checkHeader(b, IDOpenConnectionReply2, 1, 1+16+8); err != nil {
		return 0, err
	}
	addr, n, err := parseAddress(b[25:])
	if err != nil {
		return 0, err
	}
	off := 25 + n
	if len(b) < off+3 {
		return 0, ErrShortMessage
	}
	*r = OpenConnectionReply2{
		ServerGUID:    binary.BigEndian.Uint64(b[17:]),
		ClientAddress: addr,
		MTU:           binary.BigEndian.Uint16(b[off:]),
		Encryption:    b[off+2] != 0,
	}
	return off + 3, nil
}

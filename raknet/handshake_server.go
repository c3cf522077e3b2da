package raknet

import (
	"encoding/binary"
	"hash/maphash"
	"net/netip"
	"slices"
	"time"

	"github.com/netrak/netrak/reliability"
)

// DefaultCookieRotation is how often the server's cookie key changes. A
// cookie stays valid for one rotation after the one it was made in, so a
// client has at least this long between reply 1 and request 2.
const DefaultCookieRotation = 30 * time.Second

// dropReason says why an offline message was dropped.
type dropReason uint8

const (
	dropNone dropReason = iota
	dropMalformed
	dropUnknownID
	dropBadProtocol
	dropSmallProbe
	dropBadCookie
	dropUnsupported
)

// serverHandshake is the sans-I/O server side of the open-connection
// handshake, request 1 and request 2; admission decides whether a valid
// request 2 starts a connection. With cookies it keeps no per-source
// state: the cookie in reply 1 is a keyed hash of the source address, so
// request 2 is validated without remembering request 1.
type serverHandshake struct {
	guid      uint64
	protocols []uint8 // accepted, ascending
	maxMTU    uint16
	cookies   bool
	rotation  time.Duration

	key, prevKey maphash.Seed
	rotateAt     time.Time

	// Without cookies, the protocol each source offered in request 1 is
	// remembered here, bounded, for the internal address count.
	offered    map[netip.AddrPort]uint8
	maxOffered int
}

func newServerHandshake(guid uint64, protocols []uint8, maxMTU int, cookies bool, rotation time.Duration) *serverHandshake {
	p := slices.Clone(protocols)
	slices.Sort(p)
	return &serverHandshake{
		guid: guid, protocols: slices.Compact(p), maxMTU: uint16(maxMTU), cookies: cookies, rotation: rotation,
		key: maphash.MakeSeed(), prevKey: maphash.MakeSeed(),
		offered: make(map[netip.AddrPort]uint8), maxOffered: DefaultMaxPending,
	}
}

func (s *serverHandshake) accepts(protocol uint8) bool {
	_, ok := slices.BinarySearch(s.protocols, protocol)
	return ok
}

// cookieFor is the cookie for a source address that offered protocol,
// under key. Mixing the protocol in lets the server learn it back from
// request 2, which does not carry it, by trying the few it accepts.
func cookieFor(key maphash.Seed, from netip.AddrPort, protocol uint8) uint32 {
	var b [19]byte
	a := from.Addr().As16()
	copy(b[:], a[:])
	binary.BigEndian.PutUint16(b[16:], from.Port())
	b[18] = protocol
	return uint32(maphash.Bytes(key, b[:]))
}

func (s *serverHandshake) rotate(now time.Time) {
	if s.rotateAt.IsZero() {
		s.rotateAt = now.Add(s.rotation)
		return
	}
	for !now.Before(s.rotateAt) {
		s.prevKey, s.key = s.key, maphash.MakeSeed()
		s.rotateAt = s.rotateAt.Add(s.rotation)
		if now.Sub(s.rotateAt) > 2*s.rotation {
			// Idle for a long time: both old keys are stale.
			s.prevKey = maphash.MakeSeed()
			s.rotateAt = now.Add(s.rotation)
		}
	}
}

// cookieProtocol finds the protocol whose cookie for from is c, under
// the current or the previous key.
func (s *serverHandshake) cookieProtocol(c uint32, from netip.AddrPort) (uint8, bool) {
	for _, p := range s.protocols {
		if c == cookieFor(s.key, from, p) || c == cookieFor(s.prevKey, from, p) {
			return p, true
		}
	}
	return 0, false
}

// handleRequest1 answers an open connection request 1 with reply 1 or an
// incompatible protocol version message appended to dst. A reply is never
// larger than the request: probes below the engine's minimum MTU, which
// would be shorter than the reply, are dropped.
func (s *serverHandshake) handleRequest1(dst, b []byte, from netip.AddrPort, now time.Time) ([]byte, dropReason) {
	var r OpenConnectionRequest1
	if _, err := ParseOpenConnectionRequest1(b, &r); err != nil {
		return dst, dropMalformed
	}
	if int(r.MTU) < reliability.MinMTU {
		return dst, dropSmallProbe
	}
	if !s.accepts(r.Protocol) {
		m := IncompatibleProtocolVersion{Protocol: s.protocols[len(s.protocols)-1], ServerGUID: s.guid}
		dst, _ = m.Append(dst) // every such message encodes
		return dst, dropBadProtocol
	}
	s.rotate(now)
	reply := OpenConnectionReply1{ServerGUID: s.guid, MTU: min(r.MTU, s.maxMTU)}
	if s.cookies {
		reply.HasCookie = true
		reply.Cookie = cookieFor(s.key, from, r.Protocol)
	} else {
		if len(s.offered) >= s.maxOffered {
			clear(s.offered)
		}
		s.offered[from] = r.Protocol
	}
	dst, _ = reply.Append(dst) // every reply 1 encodes
	return dst, dropNone
}

// parseRequest2 validates an open connection request 2: layout, cookie
// when cookies are on, MTU; and finds the protocol the client offered in
// request 1. The caller decides whether to create the connection.
func (s *serverHandshake) parseRequest2(b []byte, from netip.AddrPort, now time.Time) (OpenConnectionRequest2, uint8, dropReason) {
	mode := CookieAbsent
	if s.cookies {
		mode = CookiePresent
	}
	var r OpenConnectionRequest2
	if _, err := ParseOpenConnectionRequest2(b, mode, &r); err != nil {
		if err == ErrSecurityUnsupported {
			return r, 0, dropUnsupported
		}
		return r, 0, dropMalformed
	}
	protocol := s.protocols[len(s.protocols)-1]
	if s.cookies {
		s.rotate(now)
		p, ok := s.cookieProtocol(r.Cookie, from)
		if !ok {
			return r, 0, dropBadCookie
		}
		protocol = p
	} else if p, ok := s.offered[from]; ok {
		protocol = p
	}
	if int(r.MTU) < reliability.MinMTU {
		return r, 0, dropSmallProbe
	}
	r.MTU = min(r.MTU, s.maxMTU)
	return r, protocol, dropNone
}

// reply2 is the server's acceptance of request 2.
func (s *serverHandshake) reply2(dst []byte, from netip.AddrPort, mtu uint16) []byte {
	r := OpenConnectionReply2{ServerGUID: s.guid, ClientAddress: from, MTU: mtu}
	dst, _ = r.Append(dst) // every reply 2 encodes
	return dst
}

// refusal appends a refusal with identifier id, one IsRefusalID accepts.
func (s *serverHandshake) refusal(dst []byte, id byte) []byte {
	r := Refusal{ID: id, GUID: s.guid}
	dst, _ = r.Append(dst)
	return dst
}

package raknet

import (
	"net/netip"
	"testing"
	"time"

	"github.com/netrak/netrak/reliability"
)

// The admission core runs on plain time values: every test here is a
// sequence of datagrams at given instants, with no socket and no sleep.

const admGUID = 0x5e

// fakePeers is the connection map the Listener would keep.
type fakePeers struct {
	byAddr  map[netip.AddrPort]peerInfo
	pending int
	closed  bool
}

func (f *fakePeers) peer(addr netip.AddrPort) (peerInfo, bool) {
	p, ok := f.byAddr[addr]
	return p, ok
}

func (f *fakePeers) guidInUse(guid uint64) bool {
	for _, p := range f.byAddr {
		if p.guid == guid {
			return true
		}
	}
	return false
}

func (f *fakePeers) load() (int, int, bool) { return len(f.byAddr), f.pending, f.closed }

// add registers a connection as the Listener does for one admitted.
func (f *fakePeers) add(from netip.AddrPort, a admitted) {
	f.byAddr[from] = peerInfo{guid: a.guid, mtu: a.mtu}
	f.pending++
}

func newTestAdmission(t testing.TB, cfg ListenConfig) (*admission, *fakePeers) {
	t.Helper()
	cfg.GUID = admGUID
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	peers := &fakePeers{byAddr: map[netip.AddrPort]peerInfo{}}
	a, err := newAdmission(&cfg, peers)
	if err != nil {
		t.Fatal(err)
	}
	return a, peers
}

// expect feeds b to a and checks the event and the identifier of the
// reply (0 for none); it returns the reply.
func expect(t *testing.T, a *admission, b []byte, from netip.AddrPort, at time.Time, want event, reply byte) ([]byte, verdict) {
	t.Helper()
	out, v := a.receive(nil, b, from, at)
	if v.event != want {
		t.Fatalf("event %d, want %d", v.event, want)
	}
	switch {
	case reply == 0 && len(out) != 0:
		t.Fatalf("replied %x, want silence", out)
	case reply != 0 && (len(out) == 0 || out[0] != reply):
		t.Fatalf("replied %x, want a 0x%02x message", out, reply)
	}
	return out, v
}

// request2 is a request 2 from from echoing the cookie the server's
// current key gives it for protocol.
func request2(t testing.TB, a *admission, from netip.AddrPort, protocol uint8, guid uint64, mtu uint16) []byte {
	r := OpenConnectionRequest2{HasCookie: a.hs.cookies, ServerAddress: hsServer, MTU: mtu, ClientGUID: guid}
	if a.hs.cookies {
		r.Cookie = cookieFor(a.hs.key, from, protocol)
	}
	return mustAppend(t, &r)
}

func TestAdmissionOfflineMessages(t *testing.T) {
	ping := mustAppend(t, &UnconnectedPing{SendTime: 5, ClientGUID: 9})
	openOnly := mustAppend(t, &UnconnectedPing{OpenConnectionsOnly: true, SendTime: 5})
	req1 := mustAppend(t, &OpenConnectionRequest1{Protocol: ProtocolBedrock, MTU: 1200})
	for _, tt := range []struct {
		name  string
		b     []byte
		full  bool
		event event
		reply byte
	}{
		{"ping", ping, false, evPing, IDUnconnectedPong},
		{"ping while full", ping, true, evPing, IDUnconnectedPong},
		{"open connections only ping", openOnly, false, evPing, IDUnconnectedPong},
		{"open connections only ping while full", openOnly, true, evNone, 0},
		{"request 1", req1, false, evOpenRequest, IDOpenConnectionReply1},
		{"request 1 while full", req1, true, evOpenRequest, IDOpenConnectionReply1},
		{"request 1, protocol not accepted", mustAppend(t, &OpenConnectionRequest1{Protocol: ProtocolOriginal, MTU: 1200}),
			false, evIncompatible, IDIncompatibleProtocolVersion},
		{"request 1 below the minimum MTU", mustAppend(t, &OpenConnectionRequest1{Protocol: ProtocolBedrock, MTU: 100}),
			false, evSmallProbe, 0},
		{"request 1 without magic", []byte{IDOpenConnectionRequest1, 0, 0}, false, evMalformed, 0},
		{"short ping", []byte{IDUnconnectedPing, 0}, false, evMalformed, 0},
		{"unknown identifier", append([]byte{0x7f}, offlineMagic[:]...), false, evUnknownID, 0},
		{"connected datagram from a stranger", []byte{0x84, 0, 0, 0}, false, evStray, 0},
		{"empty", nil, false, evMalformed, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, peers := newTestAdmission(t, ListenConfig{MaxConnections: 1, PongData: []byte("MCPE;x;")})
			if tt.full {
				peers.add(hsServer, admitted{guid: 1})
			}
			expect(t, a, tt.b, hsClient, hsEpoch, tt.event, tt.reply)
		})
	}
}

func TestAdmissionPong(t *testing.T) {
	a, _ := newTestAdmission(t, ListenConfig{PongData: []byte("first"), PongEncoding: PongRaw})
	ping := mustAppend(t, &UnconnectedPing{SendTime: 5, ClientGUID: 9})
	out, _ := expect(t, a, ping, hsClient, hsEpoch, evPing, IDUnconnectedPong)
	var pong UnconnectedPong
	if _, err := ParseUnconnectedPong(out, &pong); err != nil || pong.ServerGUID != admGUID || pong.SendTime != 5 ||
		string(pong.Data) != "first" || pong.Encoding != PongRaw {
		t.Fatalf("pong %+v, %v", pong, err)
	}
	if err := a.setPongData([]byte("second")); err != nil {
		t.Fatal(err)
	}
	out, _ = expect(t, a, ping, hsClient, hsEpoch, evPing, IDUnconnectedPong)
	if _, err := ParseUnconnectedPong(out, &pong); err != nil || string(pong.Data) != "second" {
		t.Fatalf("pong after setPongData %+v, %v", pong, err)
	}
	if err := a.setPongData(make([]byte, MaxPongDataLen+1)); err != ErrPongDataTooLong {
		t.Fatalf("oversized pong data: %v", err)
	}
}

func TestAdmissionRateLimit(t *testing.T) {
	a, _ := newTestAdmission(t, ListenConfig{OfflineRate: 10, OfflineBurst: 3})
	ping := mustAppend(t, &UnconnectedPing{SendTime: 1})
	for range 3 {
		expect(t, a, ping, hsClient, hsEpoch, evPing, IDUnconnectedPong)
	}
	expect(t, a, ping, hsClient, hsEpoch, evRateLimited, 0)
	// Every offline message draws on the same bucket.
	req1 := mustAppend(t, &OpenConnectionRequest1{Protocol: ProtocolBedrock, MTU: 1200})
	expect(t, a, req1, hsClient, hsEpoch, evRateLimited, 0)
	// Another source has its own.
	other := netip.AddrPortFrom(hsClient.Addr(), hsClient.Port()+1)
	expect(t, a, ping, other, hsEpoch, evPing, IDUnconnectedPong)
	// 10 a second: one token after 100 ms.
	at := hsEpoch.Add(100 * time.Millisecond)
	expect(t, a, ping, hsClient, at, evPing, IDUnconnectedPong)
	expect(t, a, ping, hsClient, at, evRateLimited, 0)
}

func TestAdmissionBlocksGarbage(t *testing.T) {
	a, _ := newTestAdmission(t, ListenConfig{GarbageStrikes: 3, BlockDuration: 10 * time.Second})
	ping := mustAppend(t, &UnconnectedPing{SendTime: 1})
	// An empty datagram is dropped but is no strike: nothing was parsed.
	for range 5 {
		if _, v := expect(t, a, nil, hsClient, hsEpoch, evMalformed, 0); v.blocked {
			t.Fatal("blocked for empty datagrams")
		}
	}
	if _, v := expect(t, a, []byte{IDOpenConnectionRequest1}, hsClient, hsEpoch, evMalformed, 0); v.blocked {
		t.Fatal("blocked after one strike")
	}
	if _, v := expect(t, a, []byte{0x42, 0}, hsClient, hsEpoch, evUnknownID, 0); v.blocked {
		t.Fatal("blocked after two strikes")
	}
	if _, v := expect(t, a, []byte{IDOpenConnectionRequest2, 1}, hsClient, hsEpoch, evMalformed, 0); !v.blocked {
		t.Fatal("not blocked after three strikes")
	}
	// The block is per IP: a valid ping from another port is dropped.
	other := netip.AddrPortFrom(hsClient.Addr(), hsClient.Port()+1)
	expect(t, a, ping, other, hsEpoch.Add(9*time.Second), evBlocked, 0)
	// So is anything else, before it is even looked at.
	expect(t, a, []byte{0x84, 0, 0, 0}, other, hsEpoch.Add(9*time.Second), evBlocked, 0)
	// Another IP is served meanwhile, and the block ends.
	expect(t, a, ping, hsServer, hsEpoch.Add(9*time.Second), evPing, IDUnconnectedPong)
	expect(t, a, ping, other, hsEpoch.Add(10*time.Second), evPing, IDUnconnectedPong)
}

func TestAdmissionRequest2(t *testing.T) {
	other := netip.MustParseAddrPort("203.0.113.5:40000")
	for _, tt := range []struct {
		name  string
		setup func(*fakePeers)
		b     func(*admission) []byte
		event event
		reply byte
	}{
		{"admitted", nil, nil, evAdmit, IDOpenConnectionReply2},
		{"wrong cookie", nil, func(a *admission) []byte {
			b := request2(t, a, hsClient, ProtocolBedrock, 7, 1400)
			b[17] ^= 1
			return b
		}, evBadCookie, 0},
		{"cookie of another source", nil, func(a *admission) []byte {
			return request2(t, a, other, ProtocolBedrock, 7, 1400)
		}, evBadCookie, 0},
		{"libcat challenge", nil, func(a *admission) []byte {
			b := request2(t, a, hsClient, ProtocolBedrock, 7, 1400)
			b[21] = 1
			return b
		}, evUnsupported, 0},
		{"below the minimum MTU", nil, func(a *admission) []byte {
			return request2(t, a, hsClient, ProtocolBedrock, 7, reliability.MinMTU-1)
		}, evSmallProbe, 0},
		{"MaxConnections reached", func(p *fakePeers) {
			for i := range 4 {
				p.byAddr[netip.AddrPortFrom(other.Addr(), uint16(i))] = peerInfo{guid: 100 + uint64(i), up: true}
			}
		}, nil, evRefusedFull, IDNoFreeIncomingConnections},
		{"MaxPending reached", func(p *fakePeers) { p.pending = 2 }, nil, evRefusedFull, IDNoFreeIncomingConnections},
		{"GUID connected from another address", func(p *fakePeers) {
			p.byAddr[other] = peerInfo{guid: 7, up: true}
		}, nil, evRefusedDuplicate, IDAlreadyConnected},
		{"address connected with another GUID", func(p *fakePeers) {
			p.byAddr[hsClient] = peerInfo{guid: 8, mtu: 1200}
		}, nil, evRefusedDuplicate, IDAlreadyConnected},
		{"address connected with this GUID", func(p *fakePeers) {
			p.byAddr[hsClient] = peerInfo{guid: 7, mtu: 1200, up: true}
		}, nil, evRefusedDuplicate, IDAlreadyConnected},
		{"reply 2 lost", func(p *fakePeers) {
			p.byAddr[hsClient] = peerInfo{guid: 7, mtu: 1200}
		}, nil, evNone, IDOpenConnectionReply2},
		{"listener closing", func(p *fakePeers) { p.closed = true }, nil, evNone, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, peers := newTestAdmission(t, ListenConfig{MTU: 1400, MaxConnections: 4, MaxPending: 2})
			if tt.setup != nil {
				tt.setup(peers)
			}
			b := request2(t, a, hsClient, ProtocolBedrock, 7, 1492)
			if tt.b != nil {
				b = tt.b(a)
			}
			out, v := expect(t, a, b, hsClient, hsEpoch, tt.event, tt.reply)
			if len(out) == 0 {
				return
			}
			switch out[0] {
			case IDOpenConnectionReply2:
				var r OpenConnectionReply2
				if _, err := ParseOpenConnectionReply2(out, &r); err != nil {
					t.Fatal(err)
				}
				wantMTU := uint16(1400) // the client's 1492, capped at ours
				if p, ok := peers.peer(hsClient); ok {
					wantMTU = p.mtu // a resend repeats what the connection has
				}
				if r.ServerGUID != admGUID || r.ClientAddress != hsClient || r.MTU != wantMTU {
					t.Fatalf("reply 2 %+v, want MTU %d", r, wantMTU)
				}
				if v.event == evAdmit && v.admit != (admitted{guid: 7, mtu: 1400, protocol: ProtocolBedrock}) {
					t.Fatalf("admitted %+v", v.admit)
				}
			default:
				var r Refusal
				if _, err := ParseRefusal(out, &r); err != nil || r.GUID != admGUID {
					t.Fatalf("refusal %+v, %v", r, err)
				}
			}
		})
	}
}

// TestAdmissionHandshake runs request 1 and request 2 through receive as a
// client would, with and without cookies: the connection is admitted with
// the protocol offered in request 1, which request 2 does not carry.
func TestAdmissionHandshake(t *testing.T) {
	for _, cookies := range []bool{true, false} {
		for _, protocol := range []uint8{ProtocolOriginal, ProtocolBedrock} {
			a, peers := newTestAdmission(t, ListenConfig{
				Protocols: []uint8{ProtocolOriginal, ProtocolBedrock}, DisableCookies: !cookies,
				MaxPending: 1,
			})
			req1 := mustAppend(t, &OpenConnectionRequest1{Protocol: protocol, MTU: 1200})
			out, _ := expect(t, a, req1, hsClient, hsEpoch, evOpenRequest, IDOpenConnectionReply1)
			var rep1 OpenConnectionReply1
			if _, err := ParseOpenConnectionReply1(out, &rep1); err != nil || rep1.HasCookie != cookies || rep1.MTU != 1200 {
				t.Fatalf("reply 1 %+v, %v", rep1, err)
			}
			req2 := mustAppend(t, &OpenConnectionRequest2{HasCookie: rep1.HasCookie, Cookie: rep1.Cookie,
				ServerAddress: hsServer, MTU: rep1.MTU, ClientGUID: 0xc1})
			_, v := expect(t, a, req2, hsClient, hsEpoch.Add(time.Second), evAdmit, IDOpenConnectionReply2)
			if v.admit != (admitted{guid: 0xc1, mtu: 1200, protocol: protocol}) {
				t.Fatalf("cookies %v, protocol %d: admitted %+v", cookies, protocol, v.admit)
			}
			// Admitted means pending: the next stranger finds the server full.
			peers.add(hsClient, v.admit)
			stranger := netip.MustParseAddrPort("203.0.113.9:1")
			req1 = mustAppend(t, &OpenConnectionRequest1{Protocol: protocol, MTU: 1200})
			out, _ = expect(t, a, req1, stranger, hsEpoch, evOpenRequest, IDOpenConnectionReply1)
			ParseOpenConnectionReply1(out, &rep1)
			req2 = mustAppend(t, &OpenConnectionRequest2{HasCookie: rep1.HasCookie, Cookie: rep1.Cookie,
				ServerAddress: hsServer, MTU: rep1.MTU, ClientGUID: 0xc2})
			expect(t, a, req2, stranger, hsEpoch, evRefusedFull, IDNoFreeIncomingConnections)
		}
	}
}

func TestAdmissionCookieLifetime(t *testing.T) {
	a, _ := newTestAdmission(t, ListenConfig{CookieRotation: 30 * time.Second, OfflineRate: 1000, OfflineBurst: 1000})
	req1 := mustAppend(t, &OpenConnectionRequest1{Protocol: ProtocolBedrock, MTU: 1200})
	out, _ := expect(t, a, req1, hsClient, hsEpoch, evOpenRequest, IDOpenConnectionReply1)
	var rep1 OpenConnectionReply1
	ParseOpenConnectionReply1(out, &rep1)
	req2 := mustAppend(t, &OpenConnectionRequest2{HasCookie: true, Cookie: rep1.Cookie, ServerAddress: hsServer, MTU: 1200, ClientGUID: 1})
	// Valid through the next rotation, not the one after.
	expect(t, a, req2, hsClient, hsEpoch.Add(45*time.Second), evAdmit, IDOpenConnectionReply2)
	expect(t, a, req2, hsClient, hsEpoch.Add(95*time.Second), evBadCookie, 0)
}

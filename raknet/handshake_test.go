package raknet

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

var (
	hsServer = netip.MustParseAddrPort("192.0.2.1:19132")
	hsClient = netip.MustParseAddrPort("198.51.100.7:50123")
	hsEpoch  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// TestClientHandshakeProbeSchedule checks the original library's schedule:
// 4 probes each of 1492, 1200 and 576, 500 ms apart, then failure.
func TestClientHandshakeProbeSchedule(t *testing.T) {
	h := newClientHandshake(hsServer, 1, ProtocolBedrock, MaxMTU, DefaultConnectAttempts, DefaultConnectInterval)
	now := hsEpoch
	var sizes []int
	for i := 0; i < 20 && h.phase != phaseFailed; i++ {
		b, next := h.poll(now, nil)
		if h.phase == phaseFailed {
			break
		}
		if len(b) == 0 {
			t.Fatalf("poll %d sent nothing", i)
		}
		var r OpenConnectionRequest1
		if _, err := ParseOpenConnectionRequest1(b, &r); err != nil || r.Protocol != ProtocolBedrock {
			t.Fatalf("probe %d: %+v", i, r)
		}
		sizes = append(sizes, int(r.MTU))
		if got, _ := h.poll(now.Add(499*time.Millisecond), nil); len(got) != 0 {
			t.Fatal("sent again before the interval")
		}
		if next.Sub(now) != DefaultConnectInterval {
			t.Fatalf("next probe after %v", next.Sub(now))
		}
		now = next
	}
	want := []int{1492, 1492, 1492, 1492, 1200, 1200, 1200, 1200, 576, 576, 576, 576}
	if len(sizes) != len(want) {
		t.Fatalf("probes %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("probes %v, want %v", sizes, want)
		}
	}
	if !errors.Is(h.err, ErrConnectionAttemptFailed) || now.Sub(hsEpoch) != 6*time.Second {
		t.Fatalf("ended with %v after %v", h.err, now.Sub(hsEpoch))
	}
}

// TestHandshakeCookieRoundTrip runs a client core against a server core:
// reply 1 carries a cookie, request 2 echoes it, the server recovers the
// offered protocol from it, and reply 2 completes the handshake.
func TestHandshakeCookieRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		cookies  bool
		protocol uint8
	}{{true, 11}, {true, 6}, {false, 11}, {false, 6}} {
		s := newServerHandshake(0x5e, []uint8{6, 10, 11}, 1400, tt.cookies, time.Minute)
		h := newClientHandshake(hsServer, 0xc1, tt.protocol, MaxMTU, 12, DefaultConnectInterval)
		now := hsEpoch
		req1, _ := h.poll(now, nil)
		rep1, reason := s.handleRequest1(nil, req1, hsClient, now)
		if reason != dropNone {
			t.Fatalf("request 1 dropped: %v", reason)
		}
		if len(rep1) > len(req1) {
			t.Errorf("reply 1 (%d bytes) larger than request 1 (%d)", len(rep1), len(req1))
		}
		if !h.receive(rep1, now) || h.phase != phaseRequest2 {
			t.Fatal("client did not take reply 1")
		}
		if h.mtu != 1400 {
			t.Errorf("MTU after reply 1: %d, want the server's cap 1400", h.mtu)
		}
		if h.reply1.HasCookie != tt.cookies {
			t.Errorf("cookie %v, want %v", h.reply1.HasCookie, tt.cookies)
		}
		now = now.Add(10 * time.Millisecond)
		req2, _ := h.poll(now, nil)
		r, protocol, reason := s.parseRequest2(req2, hsClient, now)
		if reason != dropNone {
			t.Fatalf("request 2 dropped: %v", reason)
		}
		if protocol != tt.protocol || r.ClientGUID != 0xc1 || r.MTU != 1400 || r.ServerAddress != hsServer {
			t.Fatalf("request 2 %+v, protocol %d", r, protocol)
		}
		rep2 := s.reply2(nil, hsClient, r.MTU)
		if !h.receive(rep2, now) || h.phase != phaseDone {
			t.Fatal("client did not take reply 2")
		}
		if h.negotiatedMTU() != 1400 || h.reply2.ClientAddress != hsClient {
			t.Fatalf("negotiated %d, client address %v", h.negotiatedMTU(), h.reply2.ClientAddress)
		}
	}
}

func TestServerHandshakeCookies(t *testing.T) {
	s := newServerHandshake(1, []uint8{11}, MaxMTU, true, 30*time.Second)
	now := hsEpoch
	b := mustAppend(t, &OpenConnectionRequest1{Protocol: 11, MTU: 1200})
	rep, _ := s.handleRequest1(nil, b, hsClient, now)
	var r1 OpenConnectionReply1
	if _, err := ParseOpenConnectionReply1(rep, &r1); err != nil || !r1.HasCookie {
		t.Fatal(r1, err)
	}
	req2 := func(cookie uint32, from netip.AddrPort, at time.Time) dropReason {
		r := OpenConnectionRequest2{HasCookie: true, Cookie: cookie, ServerAddress: hsServer, MTU: 1200, ClientGUID: 9}
		_, _, reason := s.parseRequest2(mustAppend(t, &r), from, at)
		return reason
	}
	if got := req2(r1.Cookie, hsClient, now); got != dropNone {
		t.Errorf("valid cookie: %v", got)
	}
	if got := req2(r1.Cookie^1, hsClient, now); got != dropBadCookie {
		t.Errorf("wrong cookie: %v", got)
	}
	other := netip.AddrPortFrom(hsClient.Addr(), hsClient.Port()+1)
	if got := req2(r1.Cookie, other, now); got != dropBadCookie {
		t.Errorf("cookie from another source: %v", got)
	}
	// Valid through the next rotation, not the one after.
	if got := req2(r1.Cookie, hsClient, now.Add(45*time.Second)); got != dropNone {
		t.Errorf("cookie after one rotation: %v", got)
	}
	if got := req2(r1.Cookie, hsClient, now.Add(95*time.Second)); got != dropBadCookie {
		t.Errorf("cookie after two rotations: %v", got)
	}
	// Without a cookie the request has the wrong layout.
	r := OpenConnectionRequest2{ServerAddress: hsServer, MTU: 1200, ClientGUID: 9}
	if _, _, reason := s.parseRequest2(mustAppend(t, &r), hsClient, now); reason == dropNone {
		t.Error("request 2 without cookie accepted")
	}
}

func TestServerHandshakeRequest1(t *testing.T) {
	s := newServerHandshake(1, []uint8{6, 11}, 1400, false, time.Minute)
	probe := func(protocol uint8, mtu uint16) ([]byte, dropReason) {
		b := mustAppend(t, &OpenConnectionRequest1{Protocol: protocol, MTU: mtu})
		return s.handleRequest1(nil, b, hsClient, hsEpoch)
	}
	out, reason := probe(10, 576)
	var ip IncompatibleProtocolVersion
	_, err := ParseIncompatibleProtocolVersion(out, &ip)
	if reason != dropBadProtocol || err != nil || ip.Protocol != 11 || ip.ServerGUID != 1 {
		t.Errorf("unaccepted protocol: %v %+v %v", reason, ip, err)
	}
	out, reason = probe(6, 1492)
	var r1 OpenConnectionReply1
	_, err = ParseOpenConnectionReply1(out, &r1)
	if reason != dropNone || err != nil || r1.MTU != 1400 || r1.HasCookie {
		t.Errorf("probe 1492: %v %+v %v", reason, r1, err)
	}
	// A probe shorter than the reply would make the server an amplifier.
	if out, reason := probe(11, 100); reason != dropSmallProbe || len(out) != 0 {
		t.Errorf("tiny probe: %v, %d bytes", reason, len(out))
	}
	if _, reason := s.handleRequest1(nil, []byte{IDOpenConnectionRequest1, 1, 2}, hsClient, hsEpoch); reason != dropMalformed {
		t.Errorf("garbage: %v", reason)
	}
}

func TestClientHandshakeRefusals(t *testing.T) {
	for _, tt := range []struct {
		name string
		msg  []byte
		want error
	}{
		{"incompatible", mustAppend(t, &IncompatibleProtocolVersion{Protocol: 6, ServerGUID: 3}), ErrIncompatibleProtocol},
		{"already", mustAppend(t, &Refusal{ID: IDAlreadyConnected, GUID: 3}), ErrAlreadyConnected},
		{"full", mustAppend(t, &Refusal{ID: IDNoFreeIncomingConnections, GUID: 3}), ErrNoFreeIncomingConnections},
		{"failed-bare", []byte{IDConnectionAttemptFailed}, ErrConnectionAttemptFailed},
		{"banned", mustAppend(t, &Refusal{ID: IDConnectionBanned}), ErrConnectionBanned},
	} {
		h := newClientHandshake(hsServer, 1, 11, MaxMTU, 12, time.Second)
		h.poll(hsEpoch, nil)
		if !h.receive(tt.msg, hsEpoch) || h.phase != phaseFailed || !errors.Is(h.err, tt.want) {
			t.Errorf("%s: phase %v, err %v", tt.name, h.phase, h.err)
		}
	}
	// A reply 2 asking for libcat encryption ends the attempt.
	h := newClientHandshake(hsServer, 1, 11, MaxMTU, 12, time.Second)
	h.poll(hsEpoch, nil)
	h.receive(mustAppend(t, &OpenConnectionReply1{ServerGUID: 3, MTU: 1492}), hsEpoch)
	r2 := OpenConnectionReply2{ServerGUID: 3, ClientAddress: hsClient, MTU: 1492, Encryption: true}
	if h.receive(mustAppend(t, &r2), hsEpoch); !errors.Is(h.err, ErrProtocolViolation) {
		t.Errorf("encryption: %v", h.err)
	}
	// Noise does not disturb the handshake.
	h = newClientHandshake(hsServer, 1, 11, MaxMTU, 12, time.Second)
	h.poll(hsEpoch, nil)
	for _, b := range [][]byte{nil, {0x06}, {0x08, 1, 2}, {0x84, 0, 0, 0}, {0x1c}} {
		if h.receive(b, hsEpoch) || h.phase != phaseRequest1 {
			t.Errorf("noise %x changed the handshake", b)
		}
	}
}

func TestRateLimiter(t *testing.T) {
	r := newRateLimiter(10, 3, 2)
	a := netip.MustParseAddrPort("192.0.2.1:1")
	b := netip.MustParseAddrPort("192.0.2.2:1")
	c := netip.MustParseAddrPort("192.0.2.3:1")
	now := hsEpoch
	for i := range 3 {
		if !r.allow(a, now) {
			t.Fatalf("burst message %d refused", i)
		}
	}
	if r.allow(a, now) {
		t.Fatal("message over the burst allowed")
	}
	if !r.allow(a, now.Add(100*time.Millisecond)) {
		t.Fatal("no token after 100 ms at 10/s")
	}
	r.allow(b, now)
	// The table is full of active sources: a newcomer is refused.
	if r.allow(c, now.Add(100*time.Millisecond)) {
		t.Fatal("newcomer admitted past the table bound")
	}
	// Once the others are idle (buckets refilled), they make room.
	if !r.allow(c, now.Add(2*time.Second)) {
		t.Fatal("newcomer refused although the table holds only idle sources")
	}
	if len(r.buckets) > 2 {
		t.Fatalf("table grew to %d", len(r.buckets))
	}
}

func TestBlockList(t *testing.T) {
	l := newBlockList(3, 10*time.Second, 2)
	a := netip.MustParseAddr("192.0.2.1")
	now := hsEpoch
	if l.strike(a, now) || l.strike(a, now) {
		t.Fatal("blocked before the third strike")
	}
	if !l.strike(a, now) || !l.blocked(a, now.Add(9*time.Second)) {
		t.Fatal("not blocked after three strikes")
	}
	if l.blocked(a, now.Add(10*time.Second)) {
		t.Fatal("still blocked after the block duration")
	}
	// Strikes far apart never add up.
	b := netip.MustParseAddr("192.0.2.2")
	for i := range 10 {
		if l.strike(b, now.Add(time.Duration(i)*11*time.Second)) {
			t.Fatal("blocked for strikes spread over time")
		}
	}
	// Bounded: a third offender while two are tracked and active.
	c := netip.MustParseAddr("192.0.2.3")
	l.strike(c, now.Add(99*time.Second))
	if len(l.entries) > 2 {
		t.Fatalf("block list grew to %d", len(l.entries))
	}
}

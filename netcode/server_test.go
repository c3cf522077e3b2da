package netcode

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"
)

var (
	testServerKey  = Key{0x60, 0x6a, 0xbe, 0x6e}
	testServerAddr = netip.MustParseAddrPort("203.0.113.5:40000")
	testEpoch      = time.Unix(1_800_000_000, 0)
)

type serverHarness struct {
	t      *testing.T
	s      *Server
	now    time.Time
	nextID uint64
}

func newServerHarness(t *testing.T, cfg ServerConfig) *serverHarness {
	t.Helper()
	if cfg.ProtocolID == 0 {
		cfg.ProtocolID = testProtocolID
	}
	if cfg.PrivateKey == (Key{}) {
		cfg.PrivateKey = testServerKey
	}
	if !cfg.PublicAddress.IsValid() {
		cfg.PublicAddress = testServerAddr
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &serverHarness{t: t, s: s, now: testEpoch, nextID: 1000}
	if err := s.Start(h.now); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *serverHarness) advance(d time.Duration) { h.now = h.now.Add(d) }

// testClient plays the client side by hand.
type testClient struct {
	h      *serverHarness
	addr   netip.AddrPort
	tok    ConnectToken
	send   *PacketCipher
	recv   *PacketCipher
	seq    uint64
	replay ReplayProtection
	// from the challenge
	challengeSeq   uint64
	challengeToken [ChallengeTokenBytes]byte
}

func (h *serverHarness) tokenParams(addr netip.AddrPort) *TokenParams {
	h.nextID++
	p := &TokenParams{
		ClientID:        h.nextID,
		PublicAddresses: []netip.AddrPort{testServerAddr},
		ProtocolID:      testProtocolID,
		PrivateKey:      testServerKey,
		Now:             h.now,
	}
	p.UserData[0] = byte(h.nextID)
	return p
}

func (h *serverHarness) clientWith(addr string, p *TokenParams) *testClient {
	h.t.Helper()
	b, err := GenerateConnectToken(p)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.clientWithToken(addr, b)
}

func (h *serverHarness) clientWithToken(addr string, b []byte) *testClient {
	h.t.Helper()
	c := &testClient{h: h, addr: netip.MustParseAddrPort(addr)}
	if _, err := ParseConnectToken(b, &c.tok); err != nil {
		h.t.Fatal(err)
	}
	c.send = NewPacketCipher(c.tok.ClientToServerKey, testProtocolID)
	c.recv = NewPacketCipher(c.tok.ServerToClientKey, testProtocolID)
	return c
}

func (h *serverHarness) client(addr string) *testClient {
	return h.clientWith(addr, h.tokenParams(netip.MustParseAddrPort(addr)))
}

func (c *testClient) requestPacket() []byte {
	r := RequestPacket{
		ProtocolID:      c.tok.ProtocolID,
		ExpireTimestamp: c.tok.ExpireTimestamp,
		TokenNonce:      c.tok.Nonce,
		TokenData:       c.tok.PrivateData,
	}
	return mustAppend(c.h.t, &r)
}

func (c *testClient) seal(p Packet) []byte {
	p.Sequence = c.seq
	c.seq++
	b, err := p.Append(nil, c.send)
	if err != nil {
		c.h.t.Fatal(err)
	}
	return b
}

func (c *testClient) deliver(pkt []byte) { c.h.s.Receive(pkt, c.addr, c.h.now) }

// outgoing drains the server's outbox and returns copies.
func (h *serverHarness) outgoing() []Datagram {
	var out []Datagram
	for _, d := range h.s.Outgoing() {
		out = append(out, Datagram{Data: bytes.Clone(d.Data), Addr: d.Addr})
	}
	return out
}

// read decrypts every datagram for c, failing on anything undecryptable.
func (c *testClient) read(ds []Datagram) []Packet {
	c.h.t.Helper()
	var ps []Packet
	for _, d := range ds {
		if d.Addr != c.addr {
			continue
		}
		var p Packet
		if _, err := ParsePacket(d.Data, c.recv, ClientReceives, &c.replay, &p); err != nil {
			c.h.t.Fatalf("client %v cannot read server packet: %v", c.addr, err)
		}
		p.Payload = bytes.Clone(p.Payload)
		ps = append(ps, p)
	}
	return ps
}

func types(ps []Packet) []PacketType {
	var ts []PacketType
	for _, p := range ps {
		ts = append(ts, p.Type)
	}
	return ts
}

func (c *testClient) expect(want ...PacketType) []Packet {
	c.h.t.Helper()
	ps := c.read(c.h.outgoing())
	got := types(ps)
	if len(got) != len(want) {
		c.h.t.Fatalf("client %v got %v, want %v", c.addr, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			c.h.t.Fatalf("client %v got %v, want %v", c.addr, got, want)
		}
	}
	return ps
}

// challenge sends a request and expects a challenge.
func (c *testClient) challenge() Packet {
	c.h.t.Helper()
	c.deliver(c.requestPacket())
	p := c.expect(ConnectionChallenge)[0]
	c.challengeSeq, c.challengeToken = p.ChallengeSequence, p.ChallengeToken
	return p
}

func (c *testClient) responsePacket() []byte {
	return c.seal(Packet{Type: ConnectionResponse, ChallengeSequence: c.challengeSeq, ChallengeToken: c.challengeToken})
}

// connect runs the whole handshake and returns the slot.
func (c *testClient) connect() int {
	c.h.t.Helper()
	c.challenge()
	c.deliver(c.responsePacket())
	ka := c.expect(ConnectionKeepAlive)[0]
	if ka.MaxClients != uint32(c.h.s.MaxClients()) {
		c.h.t.Fatalf("keep-alive max clients %d, want %d", ka.MaxClients, c.h.s.MaxClients())
	}
	return int(ka.ClientIndex)
}

func (h *serverHarness) dropped(r ServerDropReason) uint64 { return h.s.Stats().Dropped[r] }

func (h *serverHarness) expectDrop(r ServerDropReason, f func()) {
	h.t.Helper()
	before := h.s.Stats().Dropped
	f()
	after := h.s.Stats().Dropped
	for i := range after {
		diff := after[i] - before[i]
		want := uint64(0)
		if ServerDropReason(i) == r {
			want = 1
		}
		if diff != want {
			h.t.Fatalf("drop %q counted %d times, want %d (expected one %q drop)", ServerDropReason(i), diff, want, r)
		}
	}
	if out := h.s.Outgoing(); len(out) != 0 {
		h.t.Fatalf("server answered a dropped packet with %d datagrams", len(out))
	}
}

func TestServerConnect(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	c := h.client("198.51.100.7:5000")

	req := c.requestPacket()
	c.deliver(bytes.Clone(req))
	out := h.outgoing()
	if len(out) != 1 || len(out[0].Data) >= len(req) {
		t.Fatalf("challenge: %d datagrams, first %d bytes for a %d-byte request", len(out), len(out[0].Data), len(req))
	}
	ch := c.read(out)[0]
	if ch.Type != ConnectionChallenge || ch.Sequence != 1<<63 || ch.ChallengeSequence != 0 {
		t.Fatalf("challenge %v seq %d challenge seq %d; want global sequence 1<<63 and challenge sequence 0", ch.Type, ch.Sequence, ch.ChallengeSequence)
	}
	c.challengeSeq, c.challengeToken = ch.ChallengeSequence, ch.ChallengeToken

	h.advance(10 * time.Millisecond)
	c.deliver(c.responsePacket())
	ka := c.expect(ConnectionKeepAlive)[0]
	if ka.ClientIndex != 0 || ka.MaxClients != DefaultMaxClients || ka.Sequence != 0 {
		t.Fatalf("keep-alive index %d max %d seq %d", ka.ClientIndex, ka.MaxClients, ka.Sequence)
	}
	ev := h.s.Events()
	if len(ev) != 1 || ev[0] != (Event{Kind: EventConnected, ClientIndex: 0, ClientID: h.nextID, Address: c.addr}) {
		t.Fatalf("events %+v", ev)
	}
	info, ok := h.s.Client(0)
	if !ok || info.Address != c.addr || info.Confirmed || info.Timeout != 5*time.Second || info.UserData[0] != byte(info.ClientID) {
		t.Fatalf("client info %+v", info)
	}
	if i, ok := h.s.ClientIndex(info.ClientID); !ok || i != 0 {
		t.Fatal("ClientIndex lookup failed")
	}
	if h.s.ConnectedClients() != 1 || h.s.Stats().Connects != 1 {
		t.Fatal("counters")
	}

	// A keep-alive from the client confirms it.
	c.deliver(c.seal(Packet{Type: ConnectionKeepAlive, ClientIndex: 0, MaxClients: DefaultMaxClients}))
	if info, _ := h.s.Client(0); !info.Confirmed || info.Stats.KeepAlivesReceived != 1 {
		t.Fatalf("after keep-alive: %+v", info.Stats)
	}
	// Further responses from the connected address are ignored.
	h.expectDrop(ServerDropAddressConnected, func() { c.deliver(c.responsePacket()) })
}

func TestServerRequestChecksInOrder(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	c := h.client("198.51.100.7:5000")
	valid := c.requestPacket()
	with := func(f func(b []byte)) []byte { b := bytes.Clone(valid); f(b); return b }
	const tokenAt = 1 + VersionInfoBytes + 8 + 8 + ConnectTokenNonceBytes

	h.expectDrop(ServerDropPacketSize, func() { c.deliver(valid[:1077]) })
	h.expectDrop(ServerDropPacketSize, func() { c.deliver(append(bytes.Clone(valid), 0)) })
	h.expectDrop(ServerDropPacketSize, func() { c.deliver(nil) })
	// Each case also breaks every later check, proving which check runs first.
	h.expectDrop(ServerDropVersion, func() { c.deliver(with(func(b []byte) { b[1] = 'X'; b[14] ^= 1; b[tokenAt] ^= 1 })) })
	h.expectDrop(ServerDropProtocolID, func() { c.deliver(with(func(b []byte) { b[14] ^= 1; b[tokenAt] ^= 1 })) })
	h.expectDrop(ServerDropTokenDecrypt, func() { c.deliver(with(func(b []byte) { b[tokenAt] ^= 1 })) })
	h.expectDrop(ServerDropTokenDecrypt, func() { c.deliver(with(func(b []byte) { b[22] ^= 1 })) }) // expire is authenticated

	// Expired: expire <= now, checked before decryption.
	h.now = time.Unix(int64(c.tok.ExpireTimestamp), 0)
	h.expectDrop(ServerDropTokenExpired, func() { c.deliver(with(func(b []byte) { b[tokenAt] ^= 1 })) })
	h.now = testEpoch

	// Other private key: fails to decrypt.
	p := h.tokenParams(c.addr)
	p.PrivateKey = Key{1}
	h.expectDrop(ServerDropTokenDecrypt, func() { c.deliver(h.clientWith(c.addr.String(), p).requestPacket()) })

	// The server's public address must be in the private part.
	p = h.tokenParams(c.addr)
	p.InternalAddresses = []netip.AddrPort{netip.MustParseAddrPort("10.0.0.5:40000")}
	h.expectDrop(ServerDropServerAddress, func() { c.deliver(h.clientWith(c.addr.String(), p).requestPacket()) })

	if h.s.Stats().Requests != 0 || h.s.Stats().PacketsReceived != 10 {
		t.Fatalf("stats %+v", h.s.Stats())
	}
	c.challenge()
}

func TestServerPublicAddress(t *testing.T) {
	internal := netip.MustParseAddrPort("10.0.0.5:40000")
	h := newServerHarness(t, ServerConfig{PublicAddress: internal})
	p := h.tokenParams(netip.AddrPort{})
	p.InternalAddresses = []netip.AddrPort{internal}
	h.clientWith("198.51.100.7:5000", p).challenge()

	// A dual-stack server is known by an IPv6 address too.
	v6 := netip.MustParseAddrPort("[2001:db8::5]:40000")
	h = newServerHarness(t, ServerConfig{ExtraPublicAddresses: []netip.AddrPort{v6}})
	p = h.tokenParams(netip.AddrPort{})
	p.PublicAddresses = []netip.AddrPort{v6}
	c := h.clientWith("[2001:db8::77]:5000", p)
	if i := c.connect(); i != 0 {
		t.Fatalf("slot %d", i)
	}
	// And an IPv4 client seen through a dual-stack socket as mapped IPv6.
	h = newServerHarness(t, ServerConfig{PublicAddress: netip.MustParseAddrPort("[::ffff:203.0.113.5]:40000")})
	h.client("[::ffff:198.51.100.9]:5000").connect()
}

func TestServerConnectedChecks(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	a := h.client("198.51.100.7:5000")
	a.connect()
	h.s.Events()

	// A request from a connected address is ignored after decryption.
	h.expectDrop(ServerDropAddressConnected, func() { a.deliver(h.client(a.addr.String()).requestPacket()) })

	// A second token for a connected client id, from another address.
	p := h.tokenParams(netip.AddrPort{})
	p.ClientID = h.s.slots[0].id
	b := h.clientWith("198.51.100.8:5000", p)
	h.expectDrop(ServerDropClientIDConnected, func() { b.deliver(b.requestPacket()) })

	// The client id check also runs on the response: get a challenge for
	// the id while it is free, connect the id elsewhere, then respond.
	p = h.tokenParams(netip.AddrPort{})
	c1 := h.clientWith("198.51.100.20:5000", p)
	p2 := *p
	p2.Rand = nil
	c2 := h.clientWith("198.51.100.21:5000", &p2)
	c1.challenge()
	c2.connect()
	h.expectDrop(ServerDropClientIDConnected, func() { c1.deliver(c1.responsePacket()) })
}

func TestServerDropsClientOnlyPackets(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	c := h.client("198.51.100.7:5000")
	c.connect()
	h.expectDrop(ServerDropPacketType, func() { c.deliver(c.seal(Packet{Type: ConnectionChallenge})) })
	h.expectDrop(ServerDropPacketType, func() { c.deliver(c.seal(Packet{Type: ConnectionDenied})) })
	h.expectDrop(ServerDropPacketType, func() { c.deliver([]byte{0x17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) })
	h.expectDrop(ServerDropSequenceBytes, func() { c.deliver(append([]byte{0x95}, make([]byte, 30)...)) })
	// Unknown address: cheap checks first, then "no keys".
	stranger := h.client("198.51.100.99:1")
	h.expectDrop(ServerDropNoMapping, func() { stranger.deliver(stranger.seal(Packet{Type: ConnectionKeepAlive})) })
	h.expectDrop(ServerDropPacketType, func() { stranger.deliver(stranger.seal(Packet{Type: ConnectionDenied})) })
	// Pending handshake: keep-alives are not accepted before the response.
	stranger.challenge()
	h.expectDrop(ServerDropNotConnected, func() { stranger.deliver(stranger.seal(Packet{Type: ConnectionKeepAlive})) })
	h.expectDrop(ServerDropDecrypt, func() {
		pkt := stranger.responsePacket()
		pkt[5] ^= 1
		stranger.deliver(pkt)
	})
	h.expectDrop(ServerDropChallengeToken, func() {
		stranger.challengeToken[0] ^= 1
		stranger.deliver(stranger.responsePacket())
	})
}

func TestServerTokenOneSession(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	p := h.tokenParams(netip.AddrPort{})
	c := h.clientWith("198.51.100.7:5000", p)
	c.challenge()

	// Pending: another address may not use the token...
	thief := *c
	thief.addr = netip.MustParseAddrPort("198.51.100.66:5000")
	h.expectDrop(ServerDropTokenReused, func() { thief.deliver(thief.requestPacket()) })
	// ...but the same address may retry, and gets a fresh challenge.
	second := c.challenge()
	if second.ChallengeSequence != 1 || second.Sequence != 1<<63+1 {
		t.Fatalf("retry challenge seq %d global %d", second.ChallengeSequence, second.Sequence)
	}
	c.deliver(c.responsePacket())
	c.expect(ConnectionKeepAlive)

	// Consumed: after a disconnect the token is dead, even from its address.
	c.deliver(c.seal(Packet{Type: ConnectionDisconnect}))
	if h.s.ConnectedClients() != 0 {
		t.Fatal("client still connected")
	}
	h.expectDrop(ServerDropTokenReused, func() { c.deliver(c.requestPacket()) })
	h.expectDrop(ServerDropTokenReused, func() { thief.deliver(thief.requestPacket()) })
	// A new token for the same client works.
	h.client(c.addr.String()).connect()
}

func TestServerTokenHistoryFull(t *testing.T) {
	h := newServerHarness(t, ServerConfig{TokenHistorySize: 2})
	h.client("198.51.100.1:1").challenge()
	short := h.tokenParams(netip.AddrPort{})
	h.advance(2 * time.Second)
	short.Now = h.now
	short.Expiry = 29 * time.Second // a different expiry, after the first token's
	h.clientWith("198.51.100.2:1", short).challenge()
	late := h.client("198.51.100.3:1")
	h.expectDrop(ServerDropTokenHistoryFull, func() { late.deliver(late.requestPacket()) })
	// Once an entry expires its room is reused; unexpired ones are never evicted.
	h.now = time.Unix(int64(late.tok.CreateTimestamp-2+30), 0)
	late.challenge()
}

func TestServerRestart(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	c := h.client("198.51.100.7:5000")
	c.connect()
	old := h.client("198.51.100.8:5000")
	old.challenge()
	h.s.Events()

	h.advance(5 * time.Second)
	h.s.Stop(h.now)
	if got := types(c.read(h.outgoing())); len(got) != RedundantDisconnectCount {
		t.Fatalf("stop sent %v", got)
	}
	if ev := h.s.Events(); len(ev) != 1 || ev[0].Reason != ReasonServerDisconnected {
		t.Fatalf("events %+v", ev)
	}
	h.expectDrop(ServerDropNotRunning, func() { c.deliver(c.requestPacket()) })

	h.advance(time.Second)
	if err := h.s.Start(h.now); err != nil {
		t.Fatal(err)
	}
	if err := h.s.Start(h.now); !errors.Is(err, ErrServerRunning) {
		t.Fatalf("second Start: %v", err)
	}
	// Tokens minted before the start are refused: their history was lost.
	fresh := h.client("198.51.100.9:5000")
	h.expectDrop(ServerDropTokenTooOld, func() { old.deliver(old.requestPacket()) })
	// A token minted after the start is accepted, and the global sequence
	// starts again at 1<<63.
	if ch := fresh.challenge(); ch.Sequence != 1<<63 || ch.ChallengeSequence != 0 {
		t.Fatalf("after restart: global seq %d challenge seq %d", ch.Sequence, ch.ChallengeSequence)
	}
	// The challenge key is new: a challenge token from before the restart
	// does not open.
	fresh.challengeToken, fresh.challengeSeq = old.challengeToken, old.challengeSeq
	h.expectDrop(ServerDropChallengeToken, func() { fresh.deliver(fresh.responsePacket()) })
}

func TestServerRestartRuleBoundary(t *testing.T) {
	h := newServerHarness(t, ServerConfig{MaxTokenLifetime: 60 * time.Second})
	// A 30 s token minted at the start is 30 s "older" than the lifetime allows.
	c := h.client("198.51.100.7:5000")
	h.expectDrop(ServerDropTokenTooOld, func() { c.deliver(c.requestPacket()) })
	h.advance(30 * time.Second)
	h.client("198.51.100.8:5000").challenge()
}

func TestServerDeniedWhenFull(t *testing.T) {
	h := newServerHarness(t, ServerConfig{MaxClients: 1})
	a := h.client("198.51.100.1:1")
	b := h.client("198.51.100.2:1")
	late := h.client("198.51.100.3:1")
	a.challenge()
	b.challenge()
	a.deliver(a.responsePacket())
	a.expect(ConnectionKeepAlive)

	// Full at the response: denied, under the global sequence.
	b.deliver(b.responsePacket())
	d := b.expect(ConnectionDenied)[0]
	if d.Sequence != 1<<63+2 {
		t.Fatalf("denied sequence %d", d.Sequence)
	}
	// Full at the request: denied.
	req := late.requestPacket()
	late.deliver(req)
	out := h.outgoing()
	if len(out) != 1 || len(out[0].Data) >= len(req) {
		t.Fatal("denied must be one datagram smaller than the request")
	}
	late.read(out)
	if h.s.Stats().DeniedSent != 2 {
		t.Fatalf("denied sent %d", h.s.Stats().DeniedSent)
	}
}

func TestServerKeepAliveAndConfirm(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	c := h.client("198.51.100.7:5000")
	i := c.connect()

	h.advance(KeepAliveInterval - time.Millisecond)
	h.s.Update(h.now)
	c.expect()
	h.advance(time.Millisecond)
	h.s.Update(h.now)
	ka := c.expect(ConnectionKeepAlive)[0]
	if ka.ClientIndex != uint32(i) || ka.MaxClients != DefaultMaxClients {
		t.Fatalf("keep-alive %+v", ka)
	}

	// Unconfirmed: each payload is preceded by a keep-alive.
	if err := h.s.SendPayload(i, []byte("one")); err != nil {
		t.Fatal(err)
	}
	ps := c.expect(ConnectionKeepAlive, ConnectionPayload)
	if string(ps[1].Payload) != "one" {
		t.Fatalf("payload %q", ps[1].Payload)
	}
	// Sending a payload counts as traffic: no keep-alive is due.
	h.advance(KeepAliveInterval / 2)
	h.s.Update(h.now)
	c.expect()

	// A payload from the client confirms it; no more prefixing.
	c.deliver(c.seal(Packet{Type: ConnectionPayload, Payload: []byte("hi")}))
	if err := h.s.SendPayload(i, []byte("two")); err != nil {
		t.Fatal(err)
	}
	c.expect(ConnectionPayload)
}

func TestServerTimeout(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	c := h.client("198.51.100.7:5000")
	i := c.connect()
	h.s.Events()

	// Traffic from the client moves the deadline.
	h.advance(3 * time.Second)
	c.deliver(c.seal(Packet{Type: ConnectionKeepAlive}))
	h.advance(5*time.Second - time.Nanosecond)
	h.s.Update(h.now)
	if !h.s.ClientConnected(i) {
		t.Fatal("timed out before last_receive + timeout")
	}
	h.outgoing()
	h.advance(time.Nanosecond)
	h.s.Update(h.now) // last_receive + timeout <= now
	if h.s.ClientConnected(i) {
		t.Fatal("not timed out at last_receive + timeout")
	}
	ps := c.read(h.outgoing())
	disconnects := 0
	for _, p := range ps {
		if p.Type == ConnectionDisconnect {
			disconnects++
		}
	}
	if disconnects != RedundantDisconnectCount {
		t.Fatalf("%d disconnect packets", disconnects)
	}
	ev := h.s.Events()
	if len(ev) != 1 || ev[0].Kind != EventDisconnected || ev[0].Reason != ReasonTimedOut || ev[0].ClientIndex != i {
		t.Fatalf("events %+v", ev)
	}
	// The slot and address are free again.
	h.expectDrop(ServerDropNoMapping, func() { c.deliver(c.seal(Packet{Type: ConnectionKeepAlive})) })
}

func TestServerTimeoutDisabled(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	p := h.tokenParams(netip.AddrPort{})
	p.Timeout = -1
	c := h.clientWith("198.51.100.7:5000", p)
	i := c.connect()
	if info, _ := h.s.Client(i); info.Timeout >= 0 {
		t.Fatalf("timeout %v", info.Timeout)
	}
	h.advance(time.Hour)
	h.s.Update(h.now)
	if !h.s.ClientConnected(i) {
		t.Fatal("negative timeout did not disable timeouts")
	}
}

// withTimeoutSeconds rewrites the timeout in both parts of a connect token
// sealed with testServerKey. GenerateConnectToken cannot write a zero
// timeout (zero asks for the default), but other backends can.
func withTimeoutSeconds(t *testing.T, tok []byte, seconds int32) []byte {
	t.Helper()
	var ct ConnectToken
	if _, err := ParseConnectToken(tok, &ct); err != nil {
		t.Fatal(err)
	}
	tc := NewTokenCipher(testServerKey)
	var priv ConnectTokenPrivate
	sealed := ct.PrivateData
	if err := tc.Open(&sealed, ct.ProtocolID, ct.ExpireTimestamp, &ct.Nonce, &priv); err != nil {
		t.Fatal(err)
	}
	priv.TimeoutSeconds = seconds
	var err error
	if ct.PrivateData, err = tc.Seal(&priv, ct.ProtocolID, ct.ExpireTimestamp, &ct.Nonce); err != nil {
		t.Fatal(err)
	}
	ct.TimeoutSeconds = seconds
	return mustAppend(t, &ct)
}

// A token timeout of 0 disables timeouts like a negative one, as in the
// reference server: neither the pending handshake nor the slot expires
// for silence. Before, 0 timed a client out at the first Update after it
// connected, while reference clients with the same token never time out.
func TestServerTimeoutZeroDisables(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	b, err := GenerateConnectToken(h.tokenParams(netip.AddrPort{}))
	if err != nil {
		t.Fatal(err)
	}
	c := h.clientWithToken("198.51.100.7:5000", withTimeoutSeconds(t, b, 0))
	c.challenge()
	h.advance(10 * time.Second) // silence longer than any default timeout
	c.deliver(c.responsePacket())
	ka := c.expect(ConnectionKeepAlive)[0]
	i := int(ka.ClientIndex)
	if info, ok := h.s.Client(i); !ok || info.Timeout != 0 {
		t.Fatalf("client %+v, %v", info, ok)
	}
	h.advance(time.Hour)
	h.s.Update(h.now)
	if !h.s.ClientConnected(i) {
		t.Fatal("a zero timeout timed the client out")
	}
}

func TestServerMappingExpires(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	c := h.client("198.51.100.7:5000")
	c.challenge()
	h.advance(5 * time.Second) // the token's timeout, with nothing exchanged
	h.expectDrop(ServerDropNoMapping, func() { c.deliver(c.responsePacket()) })

	// The table is bounded: 4 mappings per slot.
	h = newServerHarness(t, ServerConfig{MaxClients: 1})
	for i := range 4 {
		h.client(netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}), 1).String()).challenge()
	}
	extra := h.client("198.51.100.200:1")
	h.expectDrop(ServerDropMappingFull, func() { extra.deliver(extra.requestPacket()) })
	// Expired mappings make room.
	h.advance(5 * time.Second)
	h.s.Update(h.now)
	extra = h.client("198.51.100.200:1")
	extra.challenge()
}

func TestServerPayloads(t *testing.T) {
	h := newServerHarness(t, ServerConfig{ReceiveQueueSize: 4})
	c := h.client("198.51.100.7:5000")
	i := c.connect()
	if _, _, ok := h.s.ReceivePayload(i); ok {
		t.Fatal("payload from nowhere")
	}
	var sent [][]byte
	for n := range 5 {
		pkt := c.seal(Packet{Type: ConnectionPayload, Payload: bytes.Repeat([]byte{byte(n)}, n+1)})
		if n == 1 {
			h.expectDrop(ServerDropReplayed, func() { c.deliver(bytes.Clone(pkt)); c.deliver(bytes.Clone(pkt)) })
		} else if n == 4 {
			h.expectDrop(ServerDropReceiveQueueFull, func() { c.deliver(pkt) })
			continue
		} else {
			c.deliver(pkt)
		}
		sent = append(sent, bytes.Repeat([]byte{byte(n)}, n+1))
	}
	for n, want := range sent {
		got, seq, ok := h.s.ReceivePayload(i)
		// The response used client sequence 0, so payload n went out as n+1.
		if !ok || !bytes.Equal(got, want) || seq != uint64(n+1) {
			t.Fatalf("payload %d: %x seq %d ok %v", n, got, seq, ok)
		}
	}
	if _, _, ok := h.s.ReceivePayload(i); ok {
		t.Fatal("extra payload")
	}
	info, _ := h.s.Client(i)
	if info.Stats.PayloadsReceived != 4 || info.Stats.Dropped[ServerDropReplayed] != 1 || info.Stats.Dropped[ServerDropReceiveQueueFull] != 1 {
		t.Fatalf("client stats %+v", info.Stats)
	}
}

func TestServerSendPayloadErrors(t *testing.T) {
	h := newServerHarness(t, ServerConfig{MaxClients: 2})
	c := h.client("198.51.100.7:5000")
	i := c.connect()
	tests := []struct {
		name    string
		index   int
		payload []byte
		want    error
	}{
		{"too large", i, make([]byte, MaxPayloadBytes+1), ErrPayloadSize},
		{"empty", i, nil, ErrPayloadSize},
		{"free slot", 1, []byte{1}, ErrClientNotConnected},
		{"negative index", -1, []byte{1}, ErrClientNotConnected},
		{"index past max", 2, []byte{1}, ErrClientNotConnected},
	}
	for _, tt := range tests {
		if err := h.s.SendPayload(tt.index, tt.payload); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if err := h.s.SendPayload(i, make([]byte, MaxPayloadBytes)); err != nil {
		t.Fatal(err)
	}
	if err := h.s.DisconnectClient(1); !errors.Is(err, ErrClientNotConnected) {
		t.Fatalf("DisconnectClient(free): %v", err)
	}
	h.s.Stop(h.now)
	if err := h.s.SendPayload(i, []byte{1}); !errors.Is(err, ErrServerNotRunning) {
		t.Fatalf("after Stop: %v", err)
	}
}

func TestServerDisconnect(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	a := h.client("198.51.100.1:1")
	b := h.client("198.51.100.2:1")
	c := h.client("198.51.100.3:1")
	ia, ib, ic := a.connect(), b.connect(), c.connect()
	h.s.Events()

	// Client-side disconnect: no packets back, reason client disconnect.
	a.deliver(a.seal(Packet{Type: ConnectionDisconnect}))
	a.expect()
	// Server-side disconnect of one client.
	if err := h.s.DisconnectClient(ib); err != nil {
		t.Fatal(err)
	}
	out := h.outgoing()
	if n := len(b.read(out)); n != RedundantDisconnectCount {
		t.Fatalf("%d disconnect packets", n)
	}
	h.s.DisconnectAll()
	if n := len(c.read(h.outgoing())); n != RedundantDisconnectCount {
		t.Fatalf("%d disconnect packets", n)
	}
	want := []Event{
		{Kind: EventDisconnected, ClientIndex: ia, ClientID: 1001, Address: a.addr, Reason: ReasonClientDisconnected},
		{Kind: EventDisconnected, ClientIndex: ib, ClientID: 1002, Address: b.addr, Reason: ReasonServerDisconnected},
		{Kind: EventDisconnected, ClientIndex: ic, ClientID: 1003, Address: c.addr, Reason: ReasonServerDisconnected},
	}
	ev := h.s.Events()
	if len(ev) != len(want) {
		t.Fatalf("events %+v", ev)
	}
	for k := range want {
		if ev[k] != want[k] {
			t.Fatalf("event %d: %+v, want %+v", k, ev[k], want[k])
		}
	}
	if h.s.ConnectedClients() != 0 || h.s.Stats().Disconnects != 3 {
		t.Fatal("slots not freed")
	}
	// Slots are reused from the lowest index.
	if i := h.client("198.51.100.4:1").connect(); i != 0 {
		t.Fatalf("reused slot %d", i)
	}
}

func TestServerManyClients(t *testing.T) {
	const n = 4096
	h := newServerHarness(t, ServerConfig{MaxClients: n})
	clients := make([]*testClient, n)
	for k := range clients {
		clients[k] = h.client(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(k >> 16), byte(k >> 8), byte(k)}), 7000).String())
		if i := clients[k].connect(); i != k {
			t.Fatalf("client %d got slot %d", k, i)
		}
	}
	if h.s.ConnectedClients() != n {
		t.Fatal("not all connected")
	}
	last := clients[n-1]
	last.deliver(last.seal(Packet{Type: ConnectionPayload, Payload: []byte("x")}))
	if p, _, ok := h.s.ReceivePayload(n - 1); !ok || string(p) != "x" {
		t.Fatal("payload from the last slot lost")
	}
	full := h.client("10.255.0.1:1")
	full.deliver(full.requestPacket())
	full.expect(ConnectionDenied)
}

func TestServerPayloadPathDoesNotAllocate(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	c := h.client("198.51.100.7:5000")
	i := c.connect()
	payload := make([]byte, 1200)
	sealed := make([][]byte, 200)
	for k := range sealed {
		sealed[k] = c.seal(Packet{Type: ConnectionPayload, Payload: payload})
	}
	buf := make([]byte, MaxPacketBytes)
	k := 0
	step := func() {
		h.s.Receive(buf[:copy(buf, sealed[k])], c.addr, h.now)
		k++
		if _, _, ok := h.s.ReceivePayload(i); !ok {
			t.Fatal("payload lost")
		}
		if err := h.s.SendPayload(i, payload); err != nil {
			t.Fatal(err)
		}
		h.s.Update(h.now)
		if len(h.s.Outgoing()) == 0 {
			t.Fatal("nothing sent")
		}
	}
	step() // warm up the queue and both outbox buffers
	step()
	if allocs := testing.AllocsPerRun(100, step); allocs != 0 {
		t.Fatalf("server payload path allocates %.1f times per round", allocs)
	}
}

func TestServerOutboxBounded(t *testing.T) {
	h := newServerHarness(t, ServerConfig{MaxClients: 1})
	c := h.client("198.51.100.7:5000")
	i := c.connect()
	for range h.s.out.max + 10 {
		if err := h.s.SendPayload(i, []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(h.s.Outgoing()); got != h.s.out.max {
		t.Fatalf("outbox holds %d datagrams, bound %d", got, h.s.out.max)
	}
	if h.dropped(ServerDropOutboxFull) == 0 {
		t.Fatal("outbox overflow not counted")
	}
}

func TestNewServerConfig(t *testing.T) {
	if _, err := NewServer(ServerConfig{}); err == nil {
		t.Fatal("missing public address accepted")
	}
	if _, err := NewServer(ServerConfig{PublicAddress: testServerAddr, MaxClients: -1}); err == nil {
		t.Fatal("negative MaxClients accepted")
	}
	s, err := NewServer(ServerConfig{PublicAddress: testServerAddr})
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxClients() != DefaultMaxClients || s.maxHistory != DefaultTokenHistorySize || s.Running() {
		t.Fatal("defaults")
	}
	if err := s.SendPayload(0, []byte{1}); !errors.Is(err, ErrServerNotRunning) {
		t.Fatal(err)
	}
	if err := (&Server{cfg: ServerConfig{Rand: &fixedReader{}}}).Start(testEpoch); err == nil {
		t.Fatal("Start ignored a failing random source")
	}
}

func TestServerDropReasonNames(t *testing.T) {
	seen := map[string]bool{}
	for r := range NumServerDropReasons {
		name := r.String()
		if name == "" || name == "unknown" || seen[name] {
			t.Fatalf("reason %d has name %q", r, name)
		}
		seen[name] = true
	}
}

// Datagrams and events handed out stay intact while the caller keeps using
// the server, until the next Outgoing or Events call.
func TestServerOutputsSurviveFurtherCalls(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	a := h.client("198.51.100.1:1")
	b := h.client("198.51.100.2:1")
	ia, ib := a.connect(), b.connect()
	if err := h.s.SendPayload(ia, []byte("for a")); err != nil {
		t.Fatal(err)
	}
	out := h.s.Outgoing()
	snapshot := bytes.Clone(out[len(out)-1].Data)
	events := h.s.Events()
	if len(events) != 2 {
		t.Fatalf("events %+v", events)
	}
	first := events[0]
	for _, e := range events {
		// Reacting to an event while iterating must not disturb the slice.
		if e.ClientIndex == ib {
			if err := h.s.DisconnectClient(ib); err != nil {
				t.Fatal(err)
			}
		}
		h.s.SendPayload(ia, bytes.Repeat([]byte{0xee}, 1200))
	}
	if events[0] != first || !bytes.Equal(out[len(out)-1].Data, snapshot) {
		t.Fatal("earlier Events or Outgoing result was overwritten")
	}
	if ev := h.s.Events(); len(ev) != 1 || ev[0].Reason != ReasonServerDisconnected {
		t.Fatalf("events after disconnect %+v", ev)
	}
}

// A driver that never drains Events costs bounded memory, and the events
// it lost are counted.
func TestServerEventQueueBounded(t *testing.T) {
	h := newServerHarness(t, ServerConfig{MaxClients: 1})
	const rounds = 35 // two events each; the queue holds 4*1+64 = 68
	for k := range rounds {
		i := h.client(fmt.Sprintf("198.51.100.%d:1", k+1)).connect()
		if err := h.s.DisconnectClient(i); err != nil {
			t.Fatal(err)
		}
		h.s.Outgoing()
	}
	ev := h.s.Events()
	if len(ev) != 68 || h.s.Stats().EventsDropped != 2 {
		t.Fatalf("%d events kept, %d dropped; want 68 and 2", len(ev), h.s.Stats().EventsDropped)
	}
	if last := ev[len(ev)-1]; last.Kind != EventDisconnected || last.Address != netip.MustParseAddrPort(fmt.Sprintf("198.51.100.%d:1", rounds)) {
		t.Fatalf("last event %+v, want the last client's disconnect", last)
	}
}

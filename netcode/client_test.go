package netcode

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"time"
)

// pair connects sans-I/O clients to sans-I/O servers by hand, with an
// explicit clock, delivering every queued datagram unless told to drop.
type pair struct {
	t       *testing.T
	now     time.Time
	servers map[netip.AddrPort]*Server
	clients map[netip.AddrPort]*Client
	// cut lists addresses whose incoming datagrams are dropped.
	cut map[netip.AddrPort]bool
}

func newPair(t *testing.T) *pair {
	return &pair{t: t, now: testEpoch, servers: map[netip.AddrPort]*Server{},
		clients: map[netip.AddrPort]*Client{}, cut: map[netip.AddrPort]bool{}}
}

func (p *pair) server(addr string, cfg ServerConfig) *Server {
	p.t.Helper()
	cfg.PublicAddress = netip.MustParseAddrPort(addr)
	if cfg.ProtocolID == 0 {
		cfg.ProtocolID = testProtocolID
	}
	if cfg.PrivateKey == (Key{}) {
		cfg.PrivateKey = testServerKey
	}
	s, err := NewServer(cfg)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := s.Start(p.now); err != nil {
		p.t.Fatal(err)
	}
	p.servers[cfg.PublicAddress] = s
	return s
}

func (p *pair) client(addr string, cfg ClientConfig) *Client {
	p.t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		p.t.Fatal(err)
	}
	p.clients[netip.MustParseAddrPort(addr)] = c
	return c
}

func (p *pair) token(id uint64, mod func(*TokenParams), servers ...string) []byte {
	p.t.Helper()
	tp := &TokenParams{ClientID: id, ProtocolID: testProtocolID, PrivateKey: testServerKey, Now: p.now}
	for _, s := range servers {
		tp.PublicAddresses = append(tp.PublicAddresses, netip.MustParseAddrPort(s))
	}
	if mod != nil {
		mod(tp)
	}
	b, err := GenerateConnectToken(tp)
	if err != nil {
		p.t.Fatal(err)
	}
	return b
}

// flush delivers queued datagrams until none are left.
func (p *pair) flush() {
	for range 100 {
		moved := false
		for addr, c := range p.clients {
			for _, d := range c.Outgoing() {
				moved = true
				if s := p.servers[d.Addr]; s != nil && !p.cut[d.Addr] {
					s.Receive(bytes.Clone(d.Data), addr, p.now)
				}
			}
		}
		for _, s := range p.servers {
			for _, d := range s.Outgoing() {
				moved = true
				if c := p.clients[d.Addr]; c != nil && !p.cut[d.Addr] {
					c.Receive(bytes.Clone(d.Data), netip.AddrPort(s.cfg.PublicAddress), p.now)
				}
			}
		}
		if !moved {
			return
		}
	}
	p.t.Fatal("datagrams still flowing after 100 rounds")
}

// step advances the clock by d, updates everyone and delivers.
func (p *pair) step(d time.Duration) {
	p.now = p.now.Add(d)
	for _, c := range p.clients {
		c.Update(p.now)
	}
	for _, s := range p.servers {
		s.Update(p.now)
	}
	p.flush()
}

// run steps in 10 ms ticks for d.
func (p *pair) run(d time.Duration) {
	for end := p.now.Add(d); p.now.Before(end); {
		p.step(10 * time.Millisecond)
	}
}

const (
	addrS1 = "203.0.113.5:40000"
	addrS2 = "203.0.113.6:40000"
	addrC1 = "198.51.100.1:5000"
	addrC2 = "198.51.100.2:5000"
)

func TestClientStateNames(t *testing.T) {
	want := map[ClientState]string{
		-6: "connect token expired", -5: "invalid connect token", -4: "connection timed out",
		-3: "connection response timed out", -2: "connection request timed out", -1: "connection denied",
		0: "disconnected", 1: "sending connection request", 2: "sending connection response", 3: "connected",
		7: "ClientState(7)",
	}
	for s, name := range want {
		if s.String() != name {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), name)
		}
	}
	for s := ClientConnectTokenExpired; s <= ClientConnected; s++ {
		if err := s.Err(); (err == nil) != (s > 0) {
			t.Errorf("%v.Err() = %v", s, err)
		}
	}
	for r := range NumClientDropReasons + 1 {
		if r.String() == "" {
			t.Errorf("drop reason %d has no name", r)
		}
	}
}

func TestClientConnectPayloadsDisconnect(t *testing.T) {
	p := newPair(t)
	s := p.server(addrS1, ServerConfig{MaxClients: 4})
	c := p.client(addrC1, ClientConfig{ProtocolID: testProtocolID})
	if c.State() != ClientDisconnected || c.ClientIndex() != -1 || c.MaxClients() != 0 {
		t.Fatalf("new client: %v index %d max %d", c.State(), c.ClientIndex(), c.MaxClients())
	}
	if err := c.SendPayload([]byte{1}); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("SendPayload while disconnected: %v", err)
	}
	if err := c.Connect(p.token(7, nil, addrS1), p.now); err != nil {
		t.Fatal(err)
	}
	if c.State() != ClientSendingConnectionRequest {
		t.Fatalf("after Connect: %v", c.State())
	}
	if err := c.Connect(p.token(7, nil, addrS1), p.now); !errors.Is(err, ErrAlreadyConnecting) {
		t.Fatalf("second Connect: %v", err)
	}
	p.flush() // request, challenge, response, keep-alive
	if c.State() != ClientConnected {
		t.Fatalf("state %v, want connected", c.State())
	}
	if c.ClientIndex() != 0 || c.MaxClients() != 4 || c.ServerAddress() != netip.MustParseAddrPort(addrS1) {
		t.Fatalf("index %d max %d server %v", c.ClientIndex(), c.MaxClients(), c.ServerAddress())
	}

	for _, err := range []error{c.SendPayload(nil), c.SendPayload(make([]byte, MaxPayloadBytes+1))} {
		if !errors.Is(err, ErrPayloadSize) {
			t.Fatalf("bad payload size: %v", err)
		}
	}
	for i := range 3 {
		if err := c.SendPayload(bytes.Repeat([]byte{byte(i)}, 1+i*100)); err != nil {
			t.Fatal(err)
		}
		if err := s.SendPayload(0, bytes.Repeat([]byte{byte(10 + i)}, MaxPayloadBytes-i)); err != nil {
			t.Fatal(err)
		}
	}
	p.flush()
	var lastSeq uint64
	for i := range 3 {
		got, seq, ok := c.ReceivePayload()
		if !ok || !bytes.Equal(got, bytes.Repeat([]byte{byte(10 + i)}, MaxPayloadBytes-i)) {
			t.Fatalf("client payload %d: ok=%v len %d", i, ok, len(got))
		}
		if i > 0 && seq <= lastSeq {
			t.Fatalf("payload sequence %d after %d", seq, lastSeq)
		}
		lastSeq = seq
		got, _, ok = s.ReceivePayload(0)
		if !ok || !bytes.Equal(got, bytes.Repeat([]byte{byte(i)}, 1+i*100)) {
			t.Fatalf("server payload %d: ok=%v len %d", i, ok, len(got))
		}
	}
	if _, _, ok := c.ReceivePayload(); ok {
		t.Fatal("extra payload")
	}

	// Idle for a while: keep-alives both ways keep the connection up.
	p.run(10 * time.Second)
	if c.State() != ClientConnected || s.ConnectedClients() != 1 {
		t.Fatalf("after idle: %v, %d connected", c.State(), s.ConnectedClients())
	}
	st := c.Stats()
	if st.KeepAlivesSent < 90 || st.KeepAlivesReceived < 90 {
		t.Fatalf("keep-alives sent %d received %d over 10 s", st.KeepAlivesSent, st.KeepAlivesReceived)
	}

	c.Disconnect(p.now)
	if c.State() != ClientDisconnected {
		t.Fatalf("after Disconnect: %v", c.State())
	}
	out := c.Outgoing()
	if len(out) != RedundantDisconnectCount {
		t.Fatalf("%d datagrams after Disconnect, want %d", len(out), RedundantDisconnectCount)
	}
	for _, d := range out {
		s.Receive(bytes.Clone(d.Data), netip.MustParseAddrPort(addrC1), p.now)
	}
	ev := s.Events()
	if last := ev[len(ev)-1]; last.Kind != EventDisconnected || last.Reason != ReasonClientDisconnected {
		t.Fatalf("server event %+v", last)
	}
	if err := c.SendPayload([]byte{1}); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("SendPayload after Disconnect: %v", err)
	}
}

func TestClientInvalidToken(t *testing.T) {
	p := newPair(t)
	good := p.token(1, nil, addrS1)
	badVersion := bytes.Clone(good)
	badVersion[0] = 'X'
	noServers := bytes.Clone(good)
	// num_server_addresses sits after version, protocol id, two timestamps,
	// nonce, private data and timeout.
	off := VersionInfoBytes + 8 + 8 + 8 + ConnectTokenNonceBytes + ConnectTokenPrivateBytes + 4
	noServers[off] = 0
	badType := bytes.Clone(good)
	badType[off+4] = 3
	createAfterExpire := bytes.Clone(good)
	createAfterExpire[VersionInfoBytes+8] = 0xff
	createAfterExpire[VersionInfoBytes+8+7] = 0xff
	for name, tc := range map[string]struct {
		token []byte
		cfg   ClientConfig
	}{
		"short":               {good[:100], ClientConfig{}},
		"version":             {badVersion, ClientConfig{}},
		"no servers":          {noServers, ClientConfig{}},
		"address type":        {badType, ClientConfig{}},
		"create after expire": {createAfterExpire, ClientConfig{}},
		"protocol id":         {good, ClientConfig{ProtocolID: 99}},
	} {
		c := p.client(addrC1, tc.cfg)
		if err := c.Connect(tc.token, p.now); !errors.Is(err, ErrInvalidConnectToken) {
			t.Errorf("%s: Connect = %v", name, err)
		}
		if c.State() != ClientInvalidConnectToken {
			t.Errorf("%s: state %v", name, c.State())
		}
		if n := len(c.Outgoing()); n != 0 {
			t.Errorf("%s: %d datagrams queued", name, n)
		}
		// An error state is not stuck: a valid token connects.
		if tc.cfg.ProtocolID != 0 {
			continue
		}
		if err := c.Connect(good, p.now); err != nil || c.State() != ClientSendingConnectionRequest {
			t.Errorf("%s: Connect with good token = %v, state %v", name, err, c.State())
		}
	}
}

func TestClientRequestsAt10Hz(t *testing.T) {
	p := newPair(t)
	c := p.client(addrC1, ClientConfig{})
	if err := c.Connect(p.token(1, nil, addrS1), p.now); err != nil {
		t.Fatal(err)
	}
	sent := 0
	for range 100 { // one second in 10 ms steps, nobody answering
		sent += len(c.Outgoing())
		p.now = p.now.Add(10 * time.Millisecond)
		c.Update(p.now)
	}
	if sent != 10 {
		t.Fatalf("%d requests in one second, want 10", sent)
	}
	if c.Stats().RequestsSent != 10+1 || len(c.Outgoing()) != 1 {
		t.Fatalf("RequestsSent %d", c.Stats().RequestsSent)
	}
}

func TestClientTimeouts(t *testing.T) {
	t.Run("request", func(t *testing.T) {
		p := newPair(t)
		c := p.client(addrC1, ClientConfig{})
		c.Connect(p.token(1, nil, addrS1), p.now) // nobody at addrS1
		p.run(5*time.Second - 10*time.Millisecond)
		if c.State() != ClientSendingConnectionRequest {
			t.Fatalf("before timeout: %v", c.State())
		}
		p.step(10 * time.Millisecond) // last_receive + timeout <= now
		if c.State() != ClientConnectionRequestTimedOut {
			t.Fatalf("state %v", c.State())
		}
	})
	t.Run("response", func(t *testing.T) {
		p2 := newPair(t)
		p2.server(addrS1, ServerConfig{})
		c2 := p2.client(addrC1, ClientConfig{})
		c2.Connect(p2.token(1, nil, addrS1), p2.now)
		for _, d := range c2.Outgoing() { // the request
			p2.servers[d.Addr].Receive(bytes.Clone(d.Data), netip.MustParseAddrPort(addrC1), p2.now)
		}
		for _, d := range p2.servers[netip.MustParseAddrPort(addrS1)].Outgoing() { // the challenge
			c2.Receive(bytes.Clone(d.Data), netip.MustParseAddrPort(addrS1), p2.now)
		}
		if c2.State() != ClientSendingConnectionResponse {
			t.Fatalf("after challenge: %v", c2.State())
		}
		p2.cut[netip.MustParseAddrPort(addrS1)] = true
		p2.run(5 * time.Second)
		if c2.State() != ClientConnectionResponseTimedOut {
			t.Fatalf("state %v", c2.State())
		}
		if n := c2.Stats().ResponsesSent; n < 45 || n > 52 {
			t.Fatalf("%d responses in 5 s, want about 50", n)
		}
	})
	t.Run("connected", func(t *testing.T) {
		p := newPair(t)
		s := p.server(addrS1, ServerConfig{})
		c := p.client(addrC1, ClientConfig{})
		c.Connect(p.token(1, nil, addrS1), p.now)
		p.flush()
		s.Stop(p.now) // server vanishes without a word: drop its disconnects
		s.Outgoing()
		delete(p.servers, netip.MustParseAddrPort(addrS1))
		p.run(5*time.Second - 10*time.Millisecond)
		if c.State() != ClientConnected {
			t.Fatalf("before timeout: %v", c.State())
		}
		p.step(10 * time.Millisecond)
		if c.State() != ClientConnectionTimedOut {
			t.Fatalf("state %v", c.State())
		}
	})
	t.Run("zero disables", func(t *testing.T) {
		// As in the reference client, a token timeout of 0 is no timeout,
		// not an immediate one: connected, the client stays connected
		// through any silence; connecting, only the token's lifetime ends it.
		p := newPair(t)
		s := p.server(addrS1, ServerConfig{})
		c := p.client(addrC1, ClientConfig{})
		c.Connect(withTimeoutSeconds(t, p.token(1, nil, addrS1), 0), p.now)
		p.flush()
		if c.State() != ClientConnected {
			t.Fatalf("state %v", c.State())
		}
		s.Stop(p.now) // the server vanishes without a word
		s.Outgoing()
		delete(p.servers, netip.MustParseAddrPort(addrS1))
		p.run(time.Minute)
		if c.State() != ClientConnected {
			t.Fatalf("state %v after a silent minute", c.State())
		}
		c2 := p.client(addrC2, ClientConfig{})
		c2.Connect(withTimeoutSeconds(t, p.token(2, nil, addrS1), 0), p.now)
		p.run(30*time.Second - 10*time.Millisecond)
		if c2.State() != ClientSendingConnectionRequest {
			t.Fatalf("state %v", c2.State())
		}
		p.step(10 * time.Millisecond)
		if c2.State() != ClientConnectTokenExpired {
			t.Fatalf("state %v", c2.State())
		}
	})
	t.Run("disabled", func(t *testing.T) {
		p := newPair(t)
		c := p.client(addrC1, ClientConfig{})
		c.Connect(p.token(1, func(tp *TokenParams) { tp.Timeout = -1 }, addrS1), p.now)
		p.run(29 * time.Second)
		if c.State() != ClientSendingConnectionRequest {
			t.Fatalf("state %v", c.State())
		}
		p.run(time.Second) // only the token's lifetime ends it
		if c.State() != ClientConnectTokenExpired {
			t.Fatalf("state %v", c.State())
		}
	})
}

func TestClientTokenExpiryIsADuration(t *testing.T) {
	p := newPair(t)
	// The token's timestamps are far in the past by the client's clock:
	// only expire - create (30 s) counts, from Connect.
	tok := p.token(1, func(tp *TokenParams) { tp.Now = time.Unix(1000, 0); tp.Timeout = -1 }, addrS1)
	c := p.client(addrC1, ClientConfig{})
	if err := c.Connect(tok, p.now); err != nil {
		t.Fatal(err)
	}
	p.run(30*time.Second - 10*time.Millisecond)
	if c.State() != ClientSendingConnectionRequest {
		t.Fatalf("before expiry: %v", c.State())
	}
	p.step(10 * time.Millisecond)
	if c.State() != ClientConnectTokenExpired {
		t.Fatalf("state %v", c.State())
	}
	// Across fail-over too: three silent servers with 5 s timeouts and a
	// 12 s token expire after 12 s, on the third server.
	c2 := p.client(addrC2, ClientConfig{})
	c2.Connect(p.token(2, func(tp *TokenParams) { tp.Expiry = 12 * time.Second }, addrS1, addrS2, "203.0.113.7:40000"), p.now)
	p.run(12 * time.Second)
	if c2.State() != ClientConnectTokenExpired || c2.Stats().ServerFailovers != 2 {
		t.Fatalf("state %v after %d fail-overs", c2.State(), c2.Stats().ServerFailovers)
	}
}

func TestClientDenied(t *testing.T) {
	p := newPair(t)
	p.server(addrS1, ServerConfig{MaxClients: 1})
	a := p.client(addrC1, ClientConfig{})
	a.Connect(p.token(1, nil, addrS1), p.now)
	p.flush()
	b := p.client(addrC2, ClientConfig{})
	b.Connect(p.token(2, nil, addrS1), p.now)
	p.flush()
	if a.State() != ClientConnected || b.State() != ClientConnectionDenied {
		t.Fatalf("states %v, %v", a.State(), b.State())
	}
	if b.Stats().DeniedReceived != 1 {
		t.Fatalf("denied received %d", b.Stats().DeniedReceived)
	}
}

func TestClientFailover(t *testing.T) {
	p := newPair(t)
	p.server(addrS1, ServerConfig{MaxClients: 1})
	s2 := p.server(addrS2, ServerConfig{MaxClients: 1})
	full := p.client(addrC1, ClientConfig{})
	full.Connect(p.token(1, nil, addrS1), p.now)
	p.flush()

	// Denied by the full first server, accepted by the second.
	c := p.client(addrC2, ClientConfig{})
	c.Connect(p.token(2, nil, addrS1, addrS2), p.now)
	p.flush()
	if c.State() != ClientConnected || c.ServerAddress() != netip.MustParseAddrPort(addrS2) || s2.ConnectedClients() != 1 {
		t.Fatalf("state %v at %v", c.State(), c.ServerAddress())
	}
	if c.Stats().ServerFailovers != 1 {
		t.Fatalf("fail-overs %d", c.Stats().ServerFailovers)
	}

	// A silent first server: the client moves on after the timeout.
	c3 := p.client("198.51.100.3:5000", ClientConfig{})
	c3.Connect(p.token(3, nil, "192.0.2.99:1", addrS1, addrS2), p.now)
	p.run(5 * time.Second)
	if c3.State() != ClientConnectionDenied || c3.Stats().ServerFailovers != 2 {
		t.Fatalf("state %v after %d fail-overs", c3.State(), c3.Stats().ServerFailovers)
	}
}

func TestClientServerDisconnect(t *testing.T) {
	p := newPair(t)
	s := p.server(addrS1, ServerConfig{})
	c := p.client(addrC1, ClientConfig{})
	c.Connect(p.token(1, nil, addrS1), p.now)
	p.flush()
	s.SendPayload(0, []byte("last words"))
	s.DisconnectClient(0)
	p.flush()
	if c.State() != ClientDisconnected {
		t.Fatalf("state %v", c.State())
	}
	// Payloads that arrived before the disconnect remain readable.
	if got, _, ok := c.ReceivePayload(); !ok || string(got) != "last words" {
		t.Fatalf("payload %q %v", got, ok)
	}
	// Nine of the ten disconnects arrived after the first and were dropped
	// as coming to an idle client.
	if n := c.Stats().Dropped[ClientDropIdle]; n != RedundantDisconnectCount-1 {
		t.Fatalf("idle drops %d", n)
	}
}

func TestClientDrops(t *testing.T) {
	p := newPair(t)
	s := p.server(addrS1, ServerConfig{})
	c := p.client(addrC1, ClientConfig{})
	server := netip.MustParseAddrPort(addrS1)

	c.Receive([]byte{1, 2, 3}, server, p.now)
	c.Connect(p.token(1, nil, addrS1), p.now)
	p.flush()

	s.SendPayload(0, []byte("hello"))
	out := s.Outgoing() // a keep-alive (the client is not confirmed yet), then the payload
	pkt := bytes.Clone(out[len(out)-1].Data)
	tampered := bytes.Clone(pkt)
	tampered[len(tampered)-1] ^= 1
	badSeqLen := bytes.Clone(pkt)
	badSeqLen[0] = 0x95
	request := mustAppend(t, &RequestPacket{})
	response := bytes.Clone(pkt)
	response[0] = response[0]&0xf0 | byte(ConnectionResponse)

	steps := []struct {
		pkt  []byte
		from netip.AddrPort
		want ClientDropReason
	}{
		{bytes.Clone(pkt), netip.MustParseAddrPort("192.0.2.1:40000"), ClientDropAddress},
		{pkt[:10], server, ClientDropPacketSize},
		{request, server, ClientDropPacketType},
		{response, server, ClientDropPacketType},
		{badSeqLen, server, ClientDropSequenceBytes},
		{tampered, server, ClientDropDecrypt},
		{bytes.Clone(pkt), server, NumClientDropReasons}, // accepted
		{bytes.Clone(pkt), server, ClientDropReplayed},
	}
	before := c.Stats().Dropped
	if before[ClientDropIdle] != 1 {
		t.Fatalf("idle drops %d", before[ClientDropIdle])
	}
	for i, st := range steps {
		before := c.Stats().Dropped
		c.Receive(st.pkt, st.from, p.now)
		after := c.Stats().Dropped
		if st.want == NumClientDropReasons {
			if after != before {
				t.Fatalf("step %d: unexpected drop", i)
			}
			continue
		}
		if after[st.want] != before[st.want]+1 || after.Total() != before.Total()+1 {
			t.Fatalf("step %d: drops %v, want one more %v", i, after, st.want)
		}
	}
	if got, _, ok := c.ReceivePayload(); !ok || string(got) != "hello" {
		t.Fatalf("payload %q %v", got, ok)
	}
}

func TestClientReceiveQueueAndOutboxBounded(t *testing.T) {
	p := newPair(t)
	s := p.server(addrS1, ServerConfig{})
	c := p.client(addrC1, ClientConfig{ReceiveQueueSize: 4, OutboxSize: 8})
	c.Connect(p.token(1, nil, addrS1), p.now)
	p.flush()
	for range 10 {
		s.SendPayload(0, []byte("x"))
	}
	p.flush()
	if d := c.Stats().Dropped[ClientDropReceiveQueueFull]; d != 6 {
		t.Fatalf("queue-full drops %d, want 6", d)
	}
	for range 20 {
		if err := c.SendPayload([]byte("y")); err != nil {
			t.Fatal(err)
		}
	}
	if n, d := len(c.Outgoing()), c.Stats().Dropped[ClientDropOutboxFull]; n != 8 || d != 12 {
		t.Fatalf("outbox %d, drops %d", n, d)
	}
	if _, err := NewClient(ClientConfig{ReceiveQueueSize: -1}); err == nil {
		t.Fatal("negative queue size accepted")
	}
}

func TestClientReconnectNeedsNewToken(t *testing.T) {
	p := newPair(t)
	s := p.server(addrS1, ServerConfig{})
	c := p.client(addrC1, ClientConfig{})
	tok := p.token(1, nil, addrS1)
	c.Connect(tok, p.now)
	p.flush()
	c.Disconnect(p.now)
	p.flush()
	if s.ConnectedClients() != 0 {
		t.Fatal("server still has the client")
	}
	c.Connect(tok, p.now) // the same token: consumed on the server
	p.run(time.Second)
	if c.State() != ClientSendingConnectionRequest || s.Stats().Dropped[ServerDropTokenReused] == 0 {
		t.Fatalf("reused token: %v, reused drops %d", c.State(), s.Stats().Dropped[ServerDropTokenReused])
	}
	c.Disconnect(p.now)
	c.Connect(p.token(1, nil, addrS1), p.now)
	p.flush()
	if c.State() != ClientConnected {
		t.Fatalf("new token: %v", c.State())
	}
}

func TestClientPayloadPathDoesNotAllocate(t *testing.T) {
	p := newPair(t)
	s := p.server(addrS1, ServerConfig{})
	c := p.client(addrC1, ClientConfig{})
	c.Connect(p.token(1, nil, addrS1), p.now)
	p.flush()
	payload := bytes.Repeat([]byte{7}, 100)
	buf := make([]byte, MaxPacketBytes)
	server := netip.MustParseAddrPort(addrS1)
	round := func() {
		p.now = p.now.Add(time.Second / 60)
		s.SendPayload(0, payload)
		for _, d := range s.Outgoing() {
			c.Receive(buf[:copy(buf, d.Data)], server, p.now)
		}
		if _, _, ok := c.ReceivePayload(); !ok {
			t.Fatal("payload lost")
		}
		c.SendPayload(payload)
		c.Update(p.now)
		c.Outgoing()
	}
	round()
	if n := testing.AllocsPerRun(100, round); n != 0 {
		t.Fatalf("%v allocations per round", n)
	}
}

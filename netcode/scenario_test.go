package netcode

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
)

// The scenarios below run real ClientConns and ServerConns on the
// simulated network inside a synctest bubble: the clock is fake, the
// network's randomness has a fixed seed, and every run is the same.

// world is one scenario's simulated network and helpers.
type world struct {
	t      *testing.T
	net    *simnet.Network
	nextID uint64
}

func scenario(t *testing.T, seed uint64, f func(t *testing.T, w *world)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		w := &world{t: t, net: simnet.New(seed), nextID: 100}
		t.Cleanup(func() { w.net.Close() })
		f(t, w)
	})
}

func (w *world) listen(addr string) *simnet.Conn {
	w.t.Helper()
	c, err := w.net.Listen(netip.MustParseAddrPort(addr))
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// server starts a ServerConn bound to addr, known by its bind address
// unless cfg says otherwise, and closes it at the end of the test.
func (w *world) server(addr string, cfg ServerConfig) *ServerConn {
	w.t.Helper()
	if cfg.ProtocolID == 0 {
		cfg.ProtocolID = testProtocolID
	}
	if cfg.PrivateKey == (Key{}) {
		cfg.PrivateKey = testServerKey
	}
	s, err := ListenServer(w.listen(addr), cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { s.Close() })
	return s
}

// token mints a token for a new client id, valid now, for the servers in
// order. mod may change the parameters.
func (w *world) token(mod func(*TokenParams), servers ...string) []byte {
	w.t.Helper()
	w.nextID++
	p := &TokenParams{ClientID: w.nextID, ProtocolID: testProtocolID, PrivateKey: testServerKey}
	p.UserData[0] = byte(w.nextID)
	for _, s := range servers {
		p.PublicAddresses = append(p.PublicAddresses, netip.MustParseAddrPort(s))
	}
	if mod != nil {
		mod(p)
	}
	b, err := GenerateConnectToken(p)
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// dial connects a client at addr with token and closes it at the end of
// the test.
func (w *world) dial(addr string, token []byte) (*ClientConn, error) {
	w.t.Helper()
	c, err := Dial(context.Background(), w.listen(addr), token, ClientConfig{ProtocolID: testProtocolID})
	if err == nil {
		w.t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func (w *world) mustDial(addr string, token []byte) *ClientConn {
	w.t.Helper()
	c, err := w.dial(addr, token)
	if err != nil {
		w.t.Fatalf("dial from %s: %v", addr, err)
	}
	return c
}

// cut drops everything between a and b, both ways.
func (w *world) cut(a, b string) {
	x, y := netip.MustParseAddrPort(a), netip.MustParseAddrPort(b)
	w.net.SetLink(x, y, transport.Impairment{Loss: 1})
	w.net.SetLink(y, x, transport.Impairment{Loss: 1})
}

// nextEvent returns the server's next event, failing the test if none
// comes within d of fake time.
func nextEvent(t *testing.T, s *ServerConn, d time.Duration) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	e, err := s.NextEvent(ctx)
	if err != nil {
		t.Fatalf("waiting for a server event: %v", err)
	}
	return e
}

// elapsed runs f and returns how much fake time it took.
func elapsed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

const (
	scServer  = "10.0.0.1:40000"
	scServer2 = "10.0.0.2:40000"
	scServer3 = "10.0.0.3:40000"
	scClient  = "10.1.0.1:50000"
	scClient2 = "10.1.0.2:50000"
)

// exchange sends a payload each way and checks both arrive. The bound is
// generous because the UDP tests use it in real time on loaded machines.
func exchange(t *testing.T, s *ServerConn, c *ClientConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	up := []byte("up from " + c.LocalAddr().String())
	if err := c.Send(up); err != nil {
		t.Fatal(err)
	}
	m, err := s.Receive(ctx)
	if err != nil || !bytes.Equal(m.Payload, up) || m.ClientIndex != c.ClientIndex() {
		t.Fatalf("server got %+v, %v", m, err)
	}
	down := []byte("down to " + c.LocalAddr().String())
	if err := s.Send(c.ClientIndex(), down); err != nil {
		t.Fatal(err)
	}
	cm, err := c.Receive(ctx)
	if err != nil || !bytes.Equal(cm.Payload, down) {
		t.Fatalf("client got %+v, %v", cm, err)
	}
}

func TestScenarioConnect(t *testing.T) {
	for _, tc := range []struct {
		name, server, dialed, client string
	}{
		{"IPv4", scServer, scServer, scClient},
		{"IPv6", "[2001:db8::1]:40000", "[2001:db8::1]:40000", "[2001:db8::2]:50000"},
		// A dual-stack socket reports IPv4 peers as IPv4-mapped IPv6
		// addresses; tokens may name a server either way.
		{"IPv4-mapped", scServer, "[::ffff:10.0.0.1]:40000", scClient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scenario(t, 1, func(t *testing.T, w *world) {
				s := w.server(tc.server, ServerConfig{MaxClients: 8})
				var c *ClientConn
				took := elapsed(func() { c = w.mustDial(tc.client, w.token(nil, tc.dialed)) })
				if took != 0 {
					t.Errorf("connecting on a perfect network took %v", took)
				}
				e := nextEvent(t, s, time.Second)
				if e.Kind != EventConnected || e.ClientIndex != c.ClientIndex() || e.ClientID != 101 {
					t.Fatalf("event %+v", e)
				}
				if c.MaxClients() != 8 || c.State() != ClientConnected {
					t.Fatalf("max clients %d, state %v", c.MaxClients(), c.State())
				}
				info, _ := s.Client(e.ClientIndex)
				if info.UserData[0] != 101 {
					t.Fatalf("user data %d", info.UserData[0])
				}
				exchange(t, s, c)
			})
		})
	}
}

func TestScenarioKeepAlive(t *testing.T) {
	scenario(t, 2, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		c := w.mustDial(scClient, w.token(nil, scServer))
		nextEvent(t, s, time.Second)
		time.Sleep(30 * time.Second) // six timeouts' worth of silence from the application
		if c.State() != ClientConnected || s.ConnectedClients() != 1 {
			t.Fatalf("after 30 s idle: %v, %d connected", c.State(), s.ConnectedClients())
		}
		st := c.Stats()
		// 10 Hz both ways, give or take the tick phase.
		if st.KeepAlivesSent < 295 || st.KeepAlivesSent > 305 || st.KeepAlivesReceived < 295 || st.KeepAlivesReceived > 305 {
			t.Fatalf("keep-alives sent %d, received %d in 30 s", st.KeepAlivesSent, st.KeepAlivesReceived)
		}
		info, _ := s.Client(c.ClientIndex())
		if !info.Confirmed || info.Stats.KeepAlivesReceived < 295 {
			t.Fatalf("server side: %+v", info)
		}
		exchange(t, s, c)
	})
}

func TestScenarioMultipleClients(t *testing.T) {
	scenario(t, 3, func(t *testing.T, w *world) {
		const n = 32
		s := w.server(scServer, ServerConfig{MaxClients: n})
		clients := make([]*ClientConn, n)
		seen := map[int]bool{}
		for i := range clients {
			addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, 0, byte(i + 1)}), 50000).String()
			clients[i] = w.mustDial(addr, w.token(nil, scServer))
			if seen[clients[i].ClientIndex()] {
				t.Fatalf("slot %d given twice", clients[i].ClientIndex())
			}
			seen[clients[i].ClientIndex()] = true
		}
		if s.ConnectedClients() != n {
			t.Fatalf("%d connected", s.ConnectedClients())
		}
		for _, c := range clients {
			exchange(t, s, c)
		}
		time.Sleep(10 * time.Second)
		if s.ConnectedClients() != n {
			t.Fatalf("%d connected after 10 s", s.ConnectedClients())
		}
	})
}

func TestScenarioMultipleServers(t *testing.T) {
	scenario(t, 4, func(t *testing.T, w *world) {
		// Nobody at the first address; the second is full; the third
		// takes the client.
		full := w.server(scServer2, ServerConfig{MaxClients: 1})
		w.mustDial(scClient2, w.token(nil, scServer2))
		s3 := w.server(scServer3, ServerConfig{})

		var c *ClientConn
		took := elapsed(func() { c = w.mustDial(scClient, w.token(nil, scServer, scServer2, scServer3)) })
		if took != 5*time.Second {
			t.Errorf("fail-over took %v, want the 5 s timeout of the silent first server", took)
		}
		if c.RemoteAddr() != netip.MustParseAddrPort(scServer3) || c.Stats().ServerFailovers != 2 {
			t.Fatalf("connected to %v after %d fail-overs", c.RemoteAddr(), c.Stats().ServerFailovers)
		}
		if full.Stats().DeniedSent != 1 {
			t.Fatalf("full server sent %d denied", full.Stats().DeniedSent)
		}
		nextEvent(t, s3, time.Second)
		exchange(t, s3, c)
	})
}

func TestScenarioConnectTokenExpired(t *testing.T) {
	scenario(t, 5, func(t *testing.T, w *world) {
		// Timeouts disabled, so only the token's 3 s lifetime can end the
		// attempt against a silent server.
		tok := w.token(func(p *TokenParams) { p.Expiry = 3 * time.Second; p.Timeout = -1 }, scServer)
		var err error
		took := elapsed(func() { _, err = w.dial(scClient, tok) })
		if !errors.Is(err, ErrConnectTokenExpired) || took != 3*time.Second {
			t.Fatalf("Dial = %v after %v", err, took)
		}
	})
}

func TestScenarioInvalidConnectToken(t *testing.T) {
	scenario(t, 6, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		tok := w.token(nil, scServer)
		tok[3] ^= 1 // version info
		if _, err := w.dial(scClient, tok); !errors.Is(err, ErrInvalidConnectToken) {
			t.Fatalf("Dial = %v", err)
		}
		if _, err := w.dial(scClient, tok[:100]); !errors.Is(err, ErrInvalidConnectToken) {
			t.Fatalf("Dial with a short token = %v", err)
		}
		// A token sealed with another key is well formed for the client
		// but not for the server, which ignores the requests.
		other := w.token(func(p *TokenParams) { p.PrivateKey = Key{1} }, scServer)
		if _, err := w.dial(scClient2, other); !errors.Is(err, ErrConnectionRequestTimedOut) {
			t.Fatalf("Dial with a foreign token = %v", err)
		}
		if d := s.Stats().Dropped[ServerDropTokenDecrypt]; d < 40 {
			t.Fatalf("server dropped %d undecryptable tokens, want one per request", d)
		}
	})
}

func TestScenarioConnectionTimedOut(t *testing.T) {
	scenario(t, 7, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		c := w.mustDial(scClient, w.token(nil, scServer))
		nextEvent(t, s, time.Second)
		w.cut(scClient, scServer)
		var err error
		took := elapsed(func() { _, err = c.Receive(context.Background()) })
		if !errors.Is(err, ErrConnectionTimedOut) || c.State() != ClientConnectionTimedOut {
			t.Fatalf("Receive = %v, state %v", err, c.State())
		}
		if took < 4900*time.Millisecond || took > 5*time.Second {
			t.Fatalf("timed out after %v, want 5 s after the last keep-alive", took)
		}
		if e := nextEvent(t, s, time.Second); e.Kind != EventDisconnected || e.Reason != ReasonTimedOut {
			t.Fatalf("server event %+v", e)
		}
		if err := c.Send([]byte{1}); !errors.Is(err, ErrConnectionTimedOut) {
			t.Fatalf("Send after timeout = %v", err)
		}
	})
}

func TestScenarioConnectionResponseTimeout(t *testing.T) {
	scenario(t, 8, func(t *testing.T, w *world) {
		w.server(scServer, ServerConfig{})
		slow := transport.Impairment{Latency: 50 * time.Millisecond}
		cl, sv := netip.MustParseAddrPort(scClient), netip.MustParseAddrPort(scServer)
		w.net.SetLink(cl, sv, slow)
		w.net.SetLink(sv, cl, slow)
		go func() {
			// The request lands at 50 ms; cut the client's side before its
			// response leaves at 100 ms, so the challenge arrives but no
			// response ever does.
			time.Sleep(75 * time.Millisecond)
			w.net.SetLink(cl, sv, transport.Impairment{Loss: 1})
		}()
		var dialErr error
		took := elapsed(func() { _, dialErr = w.dial(scClient, w.token(nil, scServer)) })
		if !errors.Is(dialErr, ErrConnectionResponseTimedOut) {
			t.Fatalf("Dial = %v", dialErr)
		}
		if took != 100*time.Millisecond+5*time.Second {
			t.Fatalf("took %v, want the challenge's arrival plus the 5 s timeout", took)
		}
	})
}

func TestScenarioConnectionRequestTimeout(t *testing.T) {
	scenario(t, 9, func(t *testing.T, w *world) {
		var err error
		took := elapsed(func() { _, err = w.dial(scClient, w.token(nil, scServer)) })
		if !errors.Is(err, ErrConnectionRequestTimedOut) || took != 5*time.Second {
			t.Fatalf("Dial = %v after %v", err, took)
		}
	})
}

func TestScenarioConnectionDenied(t *testing.T) {
	scenario(t, 10, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{MaxClients: 1})
		w.mustDial(scClient, w.token(nil, scServer))
		_, err := w.dial(scClient2, w.token(nil, scServer))
		if !errors.Is(err, ErrConnectionDenied) {
			t.Fatalf("Dial to a full server = %v", err)
		}
		if s.Stats().DeniedSent == 0 {
			t.Fatal("no denied packet counted")
		}
	})
}

func TestScenarioClientDisconnect(t *testing.T) {
	scenario(t, 11, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		c := w.mustDial(scClient, w.token(nil, scServer))
		nextEvent(t, s, time.Second)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if e := nextEvent(t, s, time.Second); e.Kind != EventDisconnected || e.Reason != ReasonClientDisconnected {
			t.Fatalf("server event %+v", e)
		}
		if c.Stats().DisconnectsSent != RedundantDisconnectCount {
			t.Fatalf("%d disconnect packets", c.Stats().DisconnectsSent)
		}
		if err := c.Send([]byte{1}); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Send after Close = %v", err)
		}
		if _, err := c.Receive(context.Background()); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Receive after Close = %v", err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("second Close = %v", err)
		}
	})
}

func TestScenarioServerDisconnect(t *testing.T) {
	scenario(t, 12, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		c := w.mustDial(scClient, w.token(nil, scServer))
		nextEvent(t, s, time.Second)
		if err := s.Send(c.ClientIndex(), []byte("bye")); err != nil {
			t.Fatal(err)
		}
		if err := s.Disconnect(c.ClientIndex()); err != nil {
			t.Fatal(err)
		}
		m, err := c.Receive(context.Background())
		if err != nil || string(m.Payload) != "bye" {
			t.Fatalf("Receive = %q, %v", m.Payload, err)
		}
		if _, err := c.Receive(context.Background()); !errors.Is(err, ErrDisconnected) {
			t.Fatalf("Receive after the server's disconnect = %v", err)
		}
		if c.State() != ClientDisconnected {
			t.Fatalf("state %v", c.State())
		}
		if e := nextEvent(t, s, time.Second); e.Kind != EventDisconnected || e.Reason != ReasonServerDisconnected {
			t.Fatalf("server event %+v", e)
		}
	})
}

func TestScenarioDisconnectReasons(t *testing.T) {
	scenario(t, 13, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		leaver := w.mustDial("10.1.0.1:50000", w.token(nil, scServer))
		kicked := w.mustDial("10.1.0.2:50000", w.token(nil, scServer))
		w.mustDial("10.1.0.3:50000", w.token(nil, scServer))
		for range 3 {
			nextEvent(t, s, time.Second)
		}
		leaver.Close()
		s.Disconnect(kicked.ClientIndex())
		w.cut("10.1.0.3:50000", scServer)
		got := map[DisconnectReason]bool{}
		for range 3 {
			e := nextEvent(t, s, 10*time.Second)
			if e.Kind != EventDisconnected {
				t.Fatalf("event %+v", e)
			}
			got[e.Reason] = true
		}
		for _, r := range []DisconnectReason{ReasonClientDisconnected, ReasonServerDisconnected, ReasonTimedOut} {
			if !got[r] {
				t.Errorf("no disconnect with reason %v", r)
			}
		}
	})
}

func TestScenarioReconnectNeedsNewToken(t *testing.T) {
	scenario(t, 14, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		tok := w.token(nil, scServer)
		c := w.mustDial(scClient, tok)
		nextEvent(t, s, time.Second)
		c.Close()
		nextEvent(t, s, time.Second)
		// The token was consumed: the same client, same address, is ignored.
		if _, err := w.dial(scClient, tok); !errors.Is(err, ErrConnectionRequestTimedOut) {
			t.Fatalf("reconnect with the used token = %v", err)
		}
		if s.Stats().Dropped[ServerDropTokenReused] == 0 {
			t.Fatal("no token-reused drop counted")
		}
		c2 := w.mustDial(scClient, w.token(nil, scServer))
		exchange(t, s, c2)
	})
}

func TestScenarioTokenReuseFromAnotherAddress(t *testing.T) {
	scenario(t, 15, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		tok := w.token(nil, scServer)
		c := w.mustDial(scClient, tok)
		// A copy of the token replayed from elsewhere, while its owner is
		// connected and after it leaves.
		if _, err := w.dial(scClient2, tok); !errors.Is(err, ErrConnectionRequestTimedOut) {
			t.Fatalf("stolen token while connected = %v", err)
		}
		c.Close()
		if _, err := w.dial(scClient2, tok); !errors.Is(err, ErrConnectionRequestTimedOut) {
			t.Fatalf("stolen token after disconnect = %v", err)
		}
		st := s.Stats()
		if st.Connects != 1 || st.Dropped[ServerDropClientIDConnected]+st.Dropped[ServerDropTokenReused] == 0 {
			t.Fatalf("connects %d, drops %v", st.Connects, st.Dropped)
		}
	})
}

func TestScenarioTokenReuseDuringHandshake(t *testing.T) {
	scenario(t, 16, func(t *testing.T, w *world) {
		// The owner's requests reach the server but no answer gets back, so
		// its handshake stays pending; a copy of the token from another
		// address is refused meanwhile.
		s := w.server(scServer, ServerConfig{})
		tok := w.token(nil, scServer)
		w.net.SetLink(netip.MustParseAddrPort(scServer), netip.MustParseAddrPort(scClient), transport.Impairment{Loss: 1})
		owner := make(chan error)
		go func() {
			_, err := w.dial(scClient, tok)
			owner <- err
		}()
		time.Sleep(time.Second)
		if _, err := w.dial(scClient2, tok); !errors.Is(err, ErrConnectionRequestTimedOut) {
			t.Fatalf("copy during the owner's handshake = %v", err)
		}
		if err := <-owner; !errors.Is(err, ErrConnectionRequestTimedOut) {
			t.Fatalf("owner = %v", err)
		}
		st := s.Stats()
		if st.Connects != 0 || st.Dropped[ServerDropTokenReused] < 40 {
			t.Fatalf("connects %d, token-reused drops %d", st.Connects, st.Dropped[ServerDropTokenReused])
		}
	})
}

func TestScenarioDisableTimeout(t *testing.T) {
	scenario(t, 17, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		c := w.mustDial(scClient, w.token(func(p *TokenParams) { p.Timeout = -1 }, scServer))
		nextEvent(t, s, time.Second)
		w.cut(scClient, scServer)
		time.Sleep(time.Minute)
		if c.State() != ClientConnected || s.ConnectedClients() != 1 {
			t.Fatalf("after a silent minute: %v, %d connected", c.State(), s.ConnectedClients())
		}
		info, _ := s.Client(c.ClientIndex())
		if info.Timeout >= 0 {
			t.Fatalf("server timeout %v", info.Timeout)
		}
		// The link comes back and traffic resumes.
		w.net.SetLink(netip.MustParseAddrPort(scClient), netip.MustParseAddrPort(scServer), transport.Impairment{})
		w.net.SetLink(netip.MustParseAddrPort(scServer), netip.MustParseAddrPort(scClient), transport.Impairment{})
		exchange(t, s, c)
	})
}

// rawChallengeSequence sends one connection request for tok from a raw
// endpoint and returns the sequence number of the challenge that comes back.
func rawChallengeSequence(t *testing.T, w *world, from string, tok []byte) (uint64, bool) {
	t.Helper()
	var ct ConnectToken
	if _, err := ParseConnectToken(tok, &ct); err != nil {
		t.Fatal(err)
	}
	conn := w.listen(from)
	defer conn.Close()
	req := RequestPacket{ProtocolID: ct.ProtocolID, ExpireTimestamp: ct.ExpireTimestamp, TokenNonce: ct.Nonce, TokenData: ct.PrivateData}
	conn.WriteTo(mustAppend(t, &req), ct.ServerAddresses[0])
	conn.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, MaxPacketBytes)
	n, _, err := conn.ReadFrom(buf)
	if err != nil {
		return 0, false
	}
	var p Packet
	if _, err := ParsePacket(buf[:n], NewPacketCipher(ct.ServerToClientKey, testProtocolID), ClientReceives, nil, &p); err != nil || p.Type != ConnectionChallenge {
		t.Fatalf("reply %v, %v", p.Type, err)
	}
	return p.Sequence, true
}

func TestScenarioServerRestart(t *testing.T) {
	scenario(t, 18, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		if seq, ok := rawChallengeSequence(t, w, "10.9.0.1:1", w.token(nil, scServer)); !ok || seq != 1<<63 {
			t.Fatalf("first challenge sequence %#x, %v", seq, ok)
		}
		c := w.mustDial(scClient, w.token(nil, scServer))
		spare := w.token(nil, scServer) // minted before the restart, never used

		time.Sleep(10 * time.Second)
		s.Close()
		if _, err := c.Receive(context.Background()); !errors.Is(err, ErrDisconnected) {
			t.Fatalf("client after the server stopped: %v", err)
		}
		c.Close()
		s = w.server(scServer, ServerConfig{})

		// The restarted server lost its token history, so it refuses
		// every token minted before it started...
		if _, ok := rawChallengeSequence(t, w, "10.9.0.2:1", spare); ok {
			t.Fatal("a token minted before the restart was accepted")
		}
		if s.Stats().Dropped[ServerDropTokenTooOld] != 1 {
			t.Fatalf("too-old drops %d", s.Stats().Dropped[ServerDropTokenTooOld])
		}
		// ...while new tokens work, and the global sequence starts over.
		if seq, ok := rawChallengeSequence(t, w, "10.9.0.3:1", w.token(nil, scServer)); !ok || seq != 1<<63 {
			t.Fatalf("challenge sequence after restart %#x, %v", seq, ok)
		}
		c2 := w.mustDial(scClient, w.token(nil, scServer))
		exchange(t, s, c2)
	})
}

func TestScenarioPublicAddressDiffersFromBind(t *testing.T) {
	scenario(t, 19, func(t *testing.T, w *world) {
		// The server is bound to its private address 10.0.0.1 and known to
		// the backend as 203.0.113.5, which is what its tokens' private
		// part names; clients reach it at the bind address.
		public := netip.MustParseAddrPort("203.0.113.5:40000")
		s := w.server(scServer, ServerConfig{PublicAddress: public})
		mint := func(p *TokenParams) { p.InternalAddresses = []netip.AddrPort{public} }
		c := w.mustDial(scClient, w.token(mint, scServer))
		exchange(t, s, c)

		// A token naming only the bind address is not for this server.
		if _, err := w.dial(scClient2, w.token(nil, scServer)); !errors.Is(err, ErrConnectionRequestTimedOut) {
			t.Fatalf("token for the bind address = %v", err)
		}
		if s.Stats().Dropped[ServerDropServerAddress] == 0 {
			t.Fatal("no server-address drop counted")
		}
	})
}

func TestScenarioDialContext(t *testing.T) {
	scenario(t, 20, func(t *testing.T, w *world) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := Dial(ctx, w.listen(scClient), w.token(nil, scServer), ClientConfig{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Dial = %v", err)
		}
		// Dial closed the endpoint: the address is free again.
		w.listen(scClient).Close()

		w.server(scServer, ServerConfig{})
		c := w.mustDial(scClient, w.token(nil, scServer))
		rctx, rcancel := context.WithTimeout(context.Background(), time.Second)
		defer rcancel()
		if _, err := c.Receive(rctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Receive with nothing to read = %v", err)
		}
		if err := c.Send(make([]byte, MaxPayloadBytes+1)); !errors.Is(err, ErrPayloadSize) {
			t.Fatalf("Send of an oversized payload = %v", err)
		}
	})
}

// The two tests below use real loopback sockets, for what the simulated
// network cannot show: a dual-stack socket and a wildcard bind.

func udpServer(t *testing.T, network, bind string, public func(port uint16) []netip.AddrPort) (*ServerConn, uint16) {
	t.Helper()
	conn, err := transport.ListenUDP(network, bind, transport.UDPConfig{})
	if err != nil {
		t.Skipf("no %s socket on %s here: %v", network, bind, err)
	}
	port := conn.LocalAddr().Port()
	addrs := public(port)
	s, err := ListenServer(conn, ServerConfig{ProtocolID: testProtocolID, PrivateKey: testServerKey,
		PublicAddress: addrs[0], ExtraPublicAddresses: addrs[1:]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, port
}

func udpDial(t *testing.T, network, bind string, id uint64, to netip.AddrPort) *ClientConn {
	t.Helper()
	tok, err := GenerateConnectToken(&TokenParams{ClientID: id, PublicAddresses: []netip.AddrPort{to},
		ProtocolID: testProtocolID, PrivateKey: testServerKey})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := transport.ListenUDP(network, bind, transport.UDPConfig{})
	if err != nil {
		t.Skipf("no %s socket on %s here: %v", network, bind, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, conn, tok, ClientConfig{})
	if err != nil {
		t.Fatalf("dial %v: %v", to, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestUDPDualStack(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	// One dual-stack socket serves an IPv4 and an IPv6 client; the server
	// knows itself by both loopback addresses.
	s, port := udpServer(t, "udp", "[::]:0", func(port uint16) []netip.AddrPort {
		return []netip.AddrPort{
			netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port),
			netip.AddrPortFrom(netip.IPv6Loopback(), port),
		}
	})
	c4 := udpDial(t, "udp4", "127.0.0.1:0", 1, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port))
	c6 := udpDial(t, "udp6", "[::1]:0", 2, netip.AddrPortFrom(netip.IPv6Loopback(), port))
	exchange(t, s, c4)
	exchange(t, s, c6)
}

func TestUDPWildcardBind(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	// Bound to 0.0.0.0, known as 127.0.0.1: the address in the token is
	// the public one, not the bind address.
	s, port := udpServer(t, "udp4", "0.0.0.0:0", func(port uint16) []netip.AddrPort {
		return []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)}
	})
	c := udpDial(t, "udp4", "127.0.0.1:0", 1, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port))
	exchange(t, s, c)
}

func TestScenarioConnectUnderLoss(t *testing.T) {
	scenario(t, 21, func(t *testing.T, w *world) {
		// Half of everything is lost, both ways: requests and responses
		// are resent at 10 Hz until they get through.
		w.net.SetDefault(transport.Impairment{Latency: 30 * time.Millisecond, Loss: 0.5})
		s := w.server(scServer, ServerConfig{})
		c := w.mustDial(scClient, w.token(nil, scServer))
		st := c.Stats()
		if st.RequestsSent+st.ResponsesSent < 3 {
			t.Errorf("connected after only %d requests and %d responses", st.RequestsSent, st.ResponsesSent)
		}
		time.Sleep(10 * time.Second) // keep-alives at 10 Hz outlast 50% loss
		if c.State() != ClientConnected || s.ConnectedClients() != 1 {
			t.Fatalf("after 10 s: %v, %d connected", c.State(), s.ConnectedClients())
		}
	})
}

func TestScenarioConcurrentUse(t *testing.T) {
	scenario(t, 22, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		c := w.mustDial(scClient, w.token(nil, scServer))
		const senders, each = 4, 50
		done := make(chan struct{})
		for k := range senders {
			go func() {
				for i := range each {
					if err := c.Send([]byte{byte(k), byte(i)}); err != nil {
						t.Error(err)
					}
					time.Sleep(time.Millisecond)
				}
				done <- struct{}{}
			}()
		}
		// Echo everything back; two readers share the client's stream.
		go func() {
			for range senders * each {
				m, err := s.Receive(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				s.Send(m.ClientIndex, m.Payload)
			}
		}()
		got := make(chan int, 2)
		for range 2 {
			go func() {
				n := 0
				for {
					if _, err := c.Receive(context.Background()); err != nil {
						got <- n
						return
					}
					n++
				}
			}()
		}
		for range senders {
			<-done
		}
		synctest.Wait() // every echo has been read
		c.Close()       // unblocks both readers with net.ErrClosed
		if total := <-got + <-got; total != senders*each {
			t.Fatalf("readers got %d payloads, want %d", total, senders*each)
		}
	})
}

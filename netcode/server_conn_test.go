package netcode

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport/simnet"
)

// simClient plays the client side by hand over a simnet endpoint.
type simClient struct {
	*testClient
	t    *testing.T
	conn *simnet.Conn
	buf  []byte
}

func newSimClient(t *testing.T, n *simnet.Network, h *serverHarness, addr string) *simClient {
	c := &simClient{testClient: h.client(addr), t: t, buf: make([]byte, 2048)}
	conn, err := n.Listen(c.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c.conn = conn
	return c
}

func (c *simClient) send(b []byte) {
	if err := c.conn.WriteTo(b, testServerAddr); err != nil {
		c.t.Fatal(err)
	}
}

// await returns the next server packet of type want, skipping others.
func (c *simClient) await(want PacketType) Packet {
	c.t.Helper()
	for {
		c.conn.SetReadDeadline(time.Now().Add(time.Second))
		k, _, err := c.conn.ReadFrom(c.buf)
		if err != nil {
			c.t.Fatalf("waiting for %v: %v", want, err)
		}
		var p Packet
		if _, err := ParsePacket(c.buf[:k], c.testClient.recv, ClientReceives, &c.replay, &p); err != nil {
			c.t.Fatal(err)
		}
		if p.Type == want {
			return p
		}
	}
}

func (c *simClient) handshake() Packet {
	c.t.Helper()
	c.send(c.requestPacket())
	ch := c.await(ConnectionChallenge)
	c.challengeSeq, c.challengeToken = ch.ChallengeSequence, ch.ChallengeToken
	c.send(c.responsePacket())
	return c.await(ConnectionKeepAlive)
}

func listenSim(t *testing.T, seed uint64) (*simnet.Network, *ServerConn) {
	n := simnet.New(seed)
	t.Cleanup(func() { n.Close() })
	srvConn, err := n.Listen(testServerAddr)
	if err != nil {
		t.Fatal(err)
	}
	// No PublicAddress: the bound address is the public one.
	sc, err := ListenServer(srvConn, ServerConfig{ProtocolID: testProtocolID, PrivateKey: testServerKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	return n, sc
}

// TestServerConn drives a ServerConn over the simulated network on the fake
// clock.
func TestServerConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		n, sc := listenSim(t, 1)
		h := &serverHarness{t: t, now: time.Now(), nextID: 1000}
		c := newSimClient(t, n, h, "198.51.100.7:5000")

		if ka := c.handshake(); ka.ClientIndex != 0 || ka.MaxClients != DefaultMaxClients {
			t.Fatalf("keep-alive %+v", ka)
		}
		ev, err := sc.NextEvent(ctx)
		if err != nil || ev.Kind != EventConnected || ev.ClientID != h.nextID {
			t.Fatalf("event %+v, %v", ev, err)
		}

		c.send(c.seal(Packet{Type: ConnectionPayload, Payload: []byte("hello")}))
		m, err := sc.Receive(ctx)
		if err != nil || string(m.Payload) != "hello" || m.ClientIndex != 0 || m.ClientID != h.nextID || m.Sequence != 1 {
			t.Fatalf("message %+v, %v", m, err)
		}
		if err := sc.Send(0, []byte("world")); err != nil {
			t.Fatal(err)
		}
		if p := c.await(ConnectionPayload); string(p.Payload) != "world" {
			t.Fatalf("payload %q", p.Payload)
		}
		if err := sc.Send(0, make([]byte, MaxPayloadBytes+1)); !errors.Is(err, ErrPayloadSize) {
			t.Fatalf("oversized send: %v", err)
		}
		if info, ok := sc.Client(0); !ok || !info.Confirmed || info.Stats.PayloadsReceived != 1 {
			t.Fatalf("client info %+v", info)
		}

		// Keep-alives flow while idle; with nothing from the client the
		// connection times out after the token's 5 s.
		start := time.Now()
		c.await(ConnectionKeepAlive)
		ev, err = sc.NextEvent(ctx)
		if err != nil || ev.Kind != EventDisconnected || ev.Reason != ReasonTimedOut {
			t.Fatalf("event %+v, %v", ev, err)
		}
		if waited := time.Since(start); waited < 4*time.Second || waited > 5*time.Second {
			t.Fatalf("timed out after %v", waited)
		}

		// A blocked Receive honours its context.
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := sc.Receive(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Receive with expiring context: %v", err)
		}

		// Close unblocks waiters; later calls get net.ErrClosed.
		waiter := make(chan error)
		go func() {
			_, err := sc.NextEvent(ctx)
			waiter <- err
		}()
		synctest.Wait()
		if err := sc.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-waiter; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("blocked NextEvent after Close: %v", err)
		}
		if _, err := sc.Receive(ctx); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Receive after Close: %v", err)
		}
		if err := sc.Send(0, []byte{1}); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Send after Close: %v", err)
		}
		if err := sc.Disconnect(0); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Disconnect after Close: %v", err)
		}
		if err := sc.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
}

func TestServerConnDisconnects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		n, sc := listenSim(t, 2)
		h := &serverHarness{t: t, now: time.Now(), nextID: 1000}
		a := newSimClient(t, n, h, "198.51.100.1:1")
		b := newSimClient(t, n, h, "198.51.100.2:1")
		a.handshake()
		b.handshake()
		for range 2 {
			if ev, err := sc.NextEvent(ctx); err != nil || ev.Kind != EventConnected {
				t.Fatalf("event %+v, %v", ev, err)
			}
		}

		if err := sc.Disconnect(0); err != nil {
			t.Fatal(err)
		}
		a.await(ConnectionDisconnect)
		if ev, _ := sc.NextEvent(ctx); ev.Reason != ReasonServerDisconnected || ev.ClientID != 1001 {
			t.Fatalf("event %+v", ev)
		}
		if err := sc.Disconnect(0); !errors.Is(err, ErrClientNotConnected) {
			t.Fatalf("second Disconnect: %v", err)
		}

		b.send(b.seal(Packet{Type: ConnectionDisconnect}))
		if ev, _ := sc.NextEvent(ctx); ev.Reason != ReasonClientDisconnected || ev.ClientID != 1002 {
			t.Fatalf("event %+v", ev)
		}
		if sc.ConnectedClients() != 0 || sc.Stats().Disconnects != 2 {
			t.Fatal("slots not freed")
		}
	})
}

func TestListenServerWildcard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := simnet.New(3)
		defer n.Close()
		conn, err := n.Listen(testServerAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		wild := wildcardConn{conn}
		if _, err := ListenServer(wild, ServerConfig{}); err == nil {
			t.Fatal("wildcard bind without PublicAddress accepted")
		}
		// As with Dial, a failed ListenServer has closed the conn it owned.
		if err := conn.WriteTo([]byte{1}, wildcardAddr); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("conn after a failed ListenServer: WriteTo = %v, want net.ErrClosed", err)
		}
	})
}

func TestListenServerBadConfigClosesConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := simnet.New(3)
		defer n.Close()
		conn, err := n.Listen(testServerAddr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ListenServer(conn, ServerConfig{MaxClients: -1}); err == nil {
			t.Fatal("MaxClients -1 accepted")
		}
		if err := conn.WriteTo([]byte{1}, wildcardAddr); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("conn after a failed ListenServer: WriteTo = %v, want net.ErrClosed", err)
		}
	})
}

// wildcardConn reports a wildcard local address, as a socket bound to
// 0.0.0.0 does.
type wildcardConn struct{ *simnet.Conn }

func (wildcardConn) LocalAddr() netip.AddrPort { return wildcardAddr }

var wildcardAddr = netip.MustParseAddrPort("0.0.0.0:40000")

// TestServerConnConcurrent uses every method from several goroutines at
// once; run with -race it checks the locking.
func TestServerConnConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		n, sc := listenSim(t, 4)
		h := &serverHarness{t: t, now: time.Now(), nextID: 1000}
		c := newSimClient(t, n, h, "198.51.100.7:5000")
		c.handshake()
		if _, err := sc.NextEvent(ctx); err != nil {
			t.Fatal(err)
		}

		const senders, each = 4, 50
		done := make(chan struct{})
		for g := range senders {
			go func() {
				defer func() { done <- struct{}{} }()
				for k := range each {
					if err := sc.Send(0, []byte{byte(g), byte(k)}); err != nil {
						t.Error(err)
						return
					}
					sc.Stats()
					sc.Client(0)
					sc.ConnectedClients()
				}
			}()
		}
		go func() {
			defer func() { done <- struct{}{} }()
			for k := range each {
				c.send(c.seal(Packet{Type: ConnectionPayload, Payload: []byte{byte(k)}}))
			}
		}()
		for range senders + 1 {
			<-done
		}
		for k := range each {
			m, err := sc.Receive(ctx)
			if err != nil || m.Payload[0] != byte(k) {
				t.Fatalf("message %d: %+v, %v", k, m, err)
			}
		}
		got := 0
		for got < senders*each {
			c.await(ConnectionPayload)
			got++
		}
	})
}

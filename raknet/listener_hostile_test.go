package raknet

import (
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport/simnet"
)

// Hostile traffic against a Listener on the simulated network: nothing
// panics, every drop is counted, and state stays bounded.

func hostileSetup(t *testing.T, lc ListenConfig) (*simnet.Network, *Listener) {
	t.Helper()
	n := simnet.New(1)
	sc, err := n.Listen(simServer)
	if err != nil {
		t.Fatal(err)
	}
	lc.Conn = sc
	l, err := Listen("", "", lc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		n.Close()
	})
	return n, l
}

// attacker opens an endpoint and returns a function that sends raw bytes
// to the listener, and one that counts datagrams received in reply.
func attacker(t *testing.T, n *simnet.Network, addr netip.AddrPort) (send func([]byte), replies func() [][]byte) {
	t.Helper()
	c, err := n.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	send = func(b []byte) { c.WriteTo(b, simServer) }
	replies = func() [][]byte {
		synctest.Wait()
		var out [][]byte
		buf := make([]byte, 2048)
		for {
			c.SetReadDeadline(time.Now())
			k, _, err := c.ReadFrom(buf)
			if err != nil {
				c.SetReadDeadline(time.Time{})
				return out
			}
			out = append(out, append([]byte(nil), buf[:k]...))
		}
	}
	return send, replies
}

func pingBytes(guid uint64) []byte {
	p := UnconnectedPing{SendTime: 1, ClientGUID: guid}
	b, _ := p.Append(nil) // every ping encodes
	return b
}

func TestListenerRateLimitsPings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, l := hostileSetup(t, ListenConfig{PongData: []byte("x")})
		send, replies := attacker(t, n, netip.MustParseAddrPort("10.9.0.1:4000"))
		for range 100 {
			send(pingBytes(1))
		}
		if got := len(replies()); got != DefaultOfflineBurst {
			t.Fatalf("%d pongs to a burst of 100 pings, want %d", got, DefaultOfflineBurst)
		}
		st := l.Stats()
		if st.Pings != DefaultOfflineBurst || st.RateLimited != 100-DefaultOfflineBurst {
			t.Fatalf("stats %+v", st)
		}
		// The bucket refills: one second later, 10 more.
		time.Sleep(time.Second)
		for range 20 {
			send(pingBytes(1))
		}
		if got := len(replies()); got != DefaultOfflineRate {
			t.Fatalf("%d pongs after a second, want %d", got, DefaultOfflineRate)
		}
		// Another source is not affected.
		send2, replies2 := attacker(t, n, netip.MustParseAddrPort("10.9.0.2:4000"))
		send2(pingBytes(2))
		if got := len(replies2()); got != 1 {
			t.Fatalf("%d pongs to an innocent source", got)
		}
	})
}

func TestListenerBlocksGarbage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, l := hostileSetup(t, ListenConfig{})
		src := netip.MustParseAddrPort("10.9.0.3:4000")
		send, replies := attacker(t, n, src)
		garbage := [][]byte{
			{0x05},          // request 1 without magic
			{0x07, 1, 2, 3}, // request 2, short
			{0x42, 0, 0},    // unknown offline identifier
			{0x01, 0, 0, 0}, // short ping
			append([]byte{0x7f}, offlineMagic[:]...),
		}
		for _, g := range garbage {
			send(g)
		}
		replies()
		st := l.Stats()
		if st.SourcesBlocked != 1 || st.Malformed+st.UnknownID != 5 {
			t.Fatalf("stats %+v", st)
		}
		// Blocked: even a valid ping from another port of that IP is dropped.
		send2, replies2 := attacker(t, n, netip.AddrPortFrom(src.Addr(), 4001))
		send2(pingBytes(3))
		if got := len(replies2()); got != 0 {
			t.Fatal("blocked IP got an answer")
		}
		if l.Stats().Blocked != 1 {
			t.Fatalf("stats %+v", l.Stats())
		}
		// After the block expires it is served again.
		time.Sleep(DefaultBlockDuration)
		send(pingBytes(3))
		if got := len(replies()); got != 1 {
			t.Fatalf("%d answers after the block expired", got)
		}
	})
}

func TestListenerSpoofedRequest2(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, l := hostileSetup(t, ListenConfig{})
		send, replies := attacker(t, n, netip.MustParseAddrPort("10.9.0.4:4000"))
		for i := range 15 {
			r := OpenConnectionRequest2{HasCookie: true, Cookie: uint32(i), ServerAddress: simServer, MTU: 1400, ClientGUID: uint64(i)}
			send(mustAppend(t, &r))
		}
		if got := len(replies()); got != 0 {
			t.Fatalf("%d answers to forged request 2", got)
		}
		if st := l.Stats(); st.BadCookie != 15 || st.Connections != 0 || l.NumConns() != 0 {
			t.Fatalf("stats %+v, %d connections", st, l.NumConns())
		}
		// Connected-looking datagrams from strangers are dropped.
		send([]byte{0x84, 0, 0, 0, 0x60, 0, 8, 0, 0, 0, 0, 0, 0, 0x86})
		replies()
		if st := l.Stats(); st.StrayDatagrams != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestListenerPendingBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Without cookies, request 2 creates state; MaxPending bounds it.
		n, l := hostileSetup(t, ListenConfig{DisableCookies: true, MaxPending: 3})
		var refusals int
		for i := range 6 {
			send, replies := attacker(t, n, netip.AddrPortFrom(netip.MustParseAddr("10.9.1.1"), uint16(5000+i)))
			r := OpenConnectionRequest2{ServerAddress: simServer, MTU: 1400, ClientGUID: uint64(100 + i)}
			send(mustAppend(t, &r))
			for _, b := range replies() {
				if b[0] == IDNoFreeIncomingConnections {
					refusals++
				}
			}
		}
		if l.NumConns() != 3 || refusals != 3 || l.Stats().RefusedFull != 3 {
			t.Fatalf("%d connections, %d refusals, stats %+v", l.NumConns(), refusals, l.Stats())
		}
		// The half-open connections expire after the handshake timeout.
		time.Sleep(DefaultHandshakeTimeout + time.Second)
		synctest.Wait()
		if l.NumConns() != 0 {
			t.Fatalf("%d half-open connections left", l.NumConns())
		}
	})
}

func TestListenerOpenConnectionsOnlyPing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, l := hostileSetup(t, ListenConfig{DisableCookies: true, MaxConnections: 1})
		send, replies := attacker(t, n, netip.MustParseAddrPort("10.9.2.1:4000"))
		openOnly := UnconnectedPing{OpenConnectionsOnly: true, SendTime: 1}
		send(mustAppend(t, &openOnly))
		if got := len(replies()); got != 1 {
			t.Fatalf("%d answers to 0x02 while accepting", got)
		}
		r := OpenConnectionRequest2{ServerAddress: simServer, MTU: 1400, ClientGUID: 1}
		send(mustAppend(t, &r))
		replies()
		send(mustAppend(t, &openOnly))
		if got := len(replies()); got != 0 {
			t.Fatalf("full server answered 0x02 (%d)", got)
		}
		send(pingBytes(1))
		if got := len(replies()); got != 1 {
			t.Fatalf("full server ignored 0x01 (%d)", got)
		}
		if st := l.Stats(); st.Pings != 2 || st.Connections != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

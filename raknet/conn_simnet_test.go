package raknet

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
)

// Connections on the simulated network under a fake clock: every
// scenario is deterministic for its seed and takes no real time.

// simPair starts a listener at simServer and returns a dial config for
// simClient, on a network with the given seed and default impairment.
func simPair(t *testing.T, seed uint64, imp transport.Impairment, lc ListenConfig) (*simnet.Network, *Listener, DialConfig) {
	t.Helper()
	n := simnet.New(seed)
	n.SetDefault(imp)
	sc, err := n.Listen(simServer)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := n.Listen(simClient)
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
		cc.Close()
		n.Close()
	})
	return n, l, DialConfig{Conn: cc, GUID: 0xc1}
}

func TestSimnetEchoWithLoss(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		synctest.Test(t, func(t *testing.T) {
			imp := transport.Impairment{Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.05}
			n, l, d := simPair(t, seed, imp, ListenConfig{})
			go serveEcho(l)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := d.DialAddr(ctx, simServer)
			if err != nil {
				t.Fatalf("seed %d: dial: %v", seed, err)
			}
			const count = 120
			go func() {
				for i := range count {
					if _, err := c.Write(echoMessage(i)); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			c.SetReadDeadline(time.Now().Add(2 * time.Minute))
			for i := range count {
				m, err := c.ReadMessage()
				if err != nil {
					t.Fatalf("seed %d: echo %d: %v", seed, i, err)
				}
				if !bytes.Equal(m.Data, echoMessage(i)) {
					t.Fatalf("seed %d: echo %d differs", seed, i)
				}
			}
			if st := c.Stats(); st.Resends == 0 || n.Stats().DroppedLoss == 0 {
				t.Errorf("seed %d: no loss exercised (resends %d, dropped %d)", seed, st.Resends, n.Stats().DroppedLoss)
			}
			if rtt := c.RTT(); rtt < 40*time.Millisecond || rtt > 200*time.Millisecond {
				t.Errorf("seed %d: RTT %v, path RTT is 40ms", seed, rtt)
			}
			c.Close()
			// The server lingers a while after the client's goodbye.
			time.Sleep(maxPeerCloseLinger + time.Second)
			synctest.Wait()
			if l.NumConns() != 0 {
				t.Errorf("seed %d: listener still has %d connections after the client closed", seed, l.NumConns())
			}
		})
	}
}

func TestSimnetMTUDiscovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The path carries UDP payloads of at most 1172 bytes: MTU 1200.
		imp := transport.Impairment{Latency: 10 * time.Millisecond, MTU: 1200 - UDPHeaderSize}
		n, l, d := simPair(t, 1, imp, ListenConfig{})
		go serveEcho(l)
		start := time.Now()
		c, err := d.DialAddr(context.Background(), simServer)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Four probes of 1492, 500 ms apart, are lost; the first probe of
		// 1200 gets through.
		if took := time.Since(start); took < 2*time.Second || took > 2*time.Second+200*time.Millisecond {
			t.Errorf("dial took %v, want about 2 s of lost 1492-byte probes", took)
		}
		if c.MTU() != 1200 {
			t.Fatalf("MTU %d, want 1200", c.MTU())
		}
		if got := n.Stats().DroppedMTU; got != 4 {
			t.Errorf("%d datagrams dropped for size, want the 4 large probes", got)
		}
		msg := echoMessage(7) // 70000 bytes, split to fit the MTU
		c.Write(msg)
		m, err := c.ReadMessage()
		if err != nil || !bytes.Equal(m.Data, msg) {
			t.Fatalf("echo at MTU 1200: %v", err)
		}
		if got := n.Stats().DroppedMTU; got != 4 {
			t.Errorf("the connection sent datagrams over its MTU: %d dropped", got-4)
		}
	})
}

func TestSimnetDeadPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, l, d := simPair(t, 1, transport.Impairment{Latency: 10 * time.Millisecond}, ListenConfig{})
		accepted := make(chan *Conn, 1)
		go func() {
			c, err := l.AcceptConn(context.Background())
			if err == nil {
				accepted <- c
			}
		}()
		c, err := d.DialAddr(context.Background(), simServer)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s := <-accepted
		// The network goes down for good.
		cut := transport.Impairment{Loss: 1}
		n.SetLink(simClient, simServer, cut)
		n.SetLink(simServer, simClient, cut)
		start := time.Now()
		_, err = c.Read(make([]byte, 10))
		if !errors.Is(err, ErrConnectionLost) {
			t.Fatalf("client read: %v, want ErrConnectionLost", err)
		}
		if took := time.Since(start); took > reliability10s+time.Second {
			t.Errorf("loss detected after %v", took)
		}
		<-s.Done()
		if !errors.Is(s.Err(), ErrConnectionLost) {
			t.Errorf("server side: %v", s.Err())
		}
		synctest.Wait()
		if l.NumConns() != 0 {
			t.Errorf("listener keeps %d dead connections", l.NumConns())
		}
	})
}

const reliability10s = 10 * time.Second

func TestSimnetGracefulCloseUnderLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		imp := transport.Impairment{Latency: 15 * time.Millisecond, Loss: 0.2}
		_, l, d := simPair(t, 7, imp, ListenConfig{})
		// Heavy loss slows the flush down: allow it the time it needs.
		d.CloseTimeout = time.Minute
		accepted := make(chan *Conn, 1)
		go func() {
			c, err := l.AcceptConn(context.Background())
			if err == nil {
				accepted <- c
			}
		}()
		c, err := d.DialAddr(context.Background(), simServer)
		if err != nil {
			t.Fatal(err)
		}
		s := <-accepted
		var want []byte
		for i := range 16 {
			m := echoMessage(i)
			want = append(want, m...)
			if _, err := c.Write(m); err != nil {
				t.Fatal(err)
			}
		}
		closed := make(chan struct{})
		go func() {
			c.Close()
			close(closed)
		}()
		got, err := io.ReadAll(s)
		if err != nil {
			t.Fatalf("server read: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("server read %d bytes before EOF, want %d", len(got), len(want))
		}
		<-closed
		if err := c.Err(); err != nil {
			t.Errorf("client: %v after a complete graceful close", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSimnetDialContextCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := simnet.New(1)
		defer n.Close()
		cc, err := n.Listen(simClient)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
		defer cancel()
		d := DialConfig{Conn: cc}
		start := time.Now()
		_, err = d.DialAddr(ctx, simServer) // nobody there
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v", err)
		}
		if took := time.Since(start); took != 1200*time.Millisecond {
			t.Fatalf("gave up after %v", took)
		}
		// The socket given in DialConfig.Conn was closed.
		if _, _, err := cc.ReadFrom(make([]byte, 1)); err == nil {
			t.Fatal("dial endpoint still open")
		}
	})
}

// A server that completes the open-connection handshake but never answers
// the connection request: the dial fails with ErrHandshakeTimeout.
func TestSimnetOnlineHandshakeTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := simnet.New(1)
		defer n.Close()
		sc, err := n.Listen(simServer)
		if err != nil {
			t.Fatal(err)
		}
		cc, err := n.Listen(simClient)
		if err != nil {
			t.Fatal(err)
		}
		hs := newServerHandshake(5, []uint8{11}, MaxMTU, true, time.Minute)
		go func() {
			buf := make([]byte, 2048)
			for {
				k, from, err := sc.ReadFrom(buf)
				if err != nil {
					return
				}
				b := buf[:k]
				switch b[0] {
				case IDOpenConnectionRequest1:
					out, _ := hs.handleRequest1(nil, b, from, time.Now())
					sc.WriteTo(out, from)
				case IDOpenConnectionRequest2:
					if r, _, reason := hs.parseRequest2(b, from, time.Now()); reason == dropNone {
						sc.WriteTo(hs.reply2(nil, from, r.MTU), from)
					}
				}
			}
		}()
		d := DialConfig{Conn: cc}
		start := time.Now()
		_, err = d.DialAddr(context.Background(), simServer)
		if !errors.Is(err, ErrHandshakeTimeout) {
			t.Fatalf("err %v, want ErrHandshakeTimeout", err)
		}
		if took := time.Since(start); took != DefaultHandshakeTimeout {
			t.Errorf("gave up after %v", took)
		}
		sc.Close()
	})
}

// Close ends as soon as the peer has acknowledged everything, even when
// the engine always has a timer running (Config.IdleTimeout makes its
// NextTimeout never zero), instead of waiting out the close timeout. The
// peer acknowledges the disconnection notification at once, without its
// ACK delay, and lingers only briefly on a clean path.
func TestSimnetCloseEndsOnAcknowledgement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const latency = 20 * time.Millisecond
		_, l, d := simPair(t, 1, transport.Impairment{Latency: latency}, ListenConfig{})
		accepted := make(chan *Conn, 1)
		go func() {
			c, err := l.AcceptConn(context.Background())
			if err == nil {
				accepted <- c
			}
		}()
		d.Reliability.IdleTimeout = 30 * time.Second
		d.CloseTimeout = 10 * time.Second
		c, err := d.DialAddr(context.Background(), simServer)
		if err != nil {
			t.Fatal(err)
		}
		s := <-accepted
		msg := echoMessage(6) // split over several datagrams
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if m, err := s.ReadMessage(); err != nil || !bytes.Equal(m.Data, msg) {
			t.Fatalf("server read: %v", err)
		}
		start := time.Now()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 2*latency {
			t.Errorf("Close took %v, want one round trip (%v): the ACK of the notification waited", took, 2*latency)
		}
		if err := c.Err(); err != nil {
			t.Errorf("Err after a graceful close: %v", err)
		}
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Read after Close: %v, want net.ErrClosed", err)
		}
		if _, err := s.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("server read after the client closed: %v, want io.EOF", err)
		}
		<-s.Done()
		// The notification reached the server after one latency.
		linger := time.Since(start) - latency
		if linger < minPeerCloseLinger || linger >= time.Second {
			t.Errorf("server lingered %v after the notification on a clean path, want at least %v and under 1 s", linger, minPeerCloseLinger)
		}
		if !errors.Is(s.Err(), ErrPeerClosed) {
			t.Errorf("server Err %v, want ErrPeerClosed", s.Err())
		}
		synctest.Wait()
		if l.NumConns() != 0 {
			t.Errorf("listener keeps %d connections", l.NumConns())
		}
	})
}

package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
)

const srvAddr = "10.0.0.1:40000"

func TestDialRefusals(t *testing.T) {
	for _, tt := range []struct {
		name string
		mod  func(*netcode.TokenParams)
		want error
		drop netcode.ServerDropReason // the server's count of the refusal
	}{
		{"wrong key", func(p *netcode.TokenParams) { p.PrivateKey[0]++ }, netcode.ErrConnectionRequestTimedOut, netcode.ServerDropTokenDecrypt},
		{"wrong protocol id", func(p *netcode.TokenParams) { p.ProtocolID++ }, netcode.ErrConnectionRequestTimedOut, netcode.ServerDropProtocolID},
		{"expired on the server's clock", func(p *netcode.TokenParams) {
			// Minted long ago with a long lifetime: the client still
			// believes in it, the server's clock says it is over.
			p.Now = time.Now().Add(-time.Hour)
			p.Expiry = time.Hour
		}, netcode.ErrConnectionRequestTimedOut, netcode.ServerDropTokenExpired},
		{"lifetime over before connecting", func(p *netcode.TokenParams) {
			p.Expiry = time.Second
			p.Timeout = 5 * time.Second
			p.PublicAddresses = []netip.AddrPort{netip.MustParseAddrPort("10.0.0.9:40000")} // nobody there
		}, netcode.ErrConnectTokenExpired, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scenario(t, 2, func(t *testing.T, w *world) {
				l := w.server(srvAddr, nil)
				_, err := w.dial("10.0.0.2:5000", w.token(tt.mod, srvAddr), nil)
				if !errors.Is(err, tt.want) {
					t.Fatalf("Dial = %v, want %v", err, tt.want)
				}
				if tt.drop != 0 {
					if n := l.ServerStats().Dropped[tt.drop]; n == 0 {
						t.Errorf("server counted no %v drop", tt.drop)
					}
				}
				if n := l.ConnectedClients(); n != 0 {
					t.Errorf("%d clients connected", n)
				}
			})
		})
	}
}

func TestDialInvalidToken(t *testing.T) {
	scenario(t, 3, func(t *testing.T, w *world) {
		_, err := w.dial("10.0.0.2:5000", make([]byte, 100), nil)
		if !errors.Is(err, netcode.ErrInvalidConnectToken) {
			t.Fatalf("Dial = %v, want ErrInvalidConnectToken", err)
		}
	})
}

// TestTokenReuse: a token admits one session; the same token from
// another address is refused while the first is connected, and after it
// disconnected.
func TestTokenReuse(t *testing.T) {
	scenario(t, 4, func(t *testing.T, w *world) {
		l := w.server(srvAddr, nil)
		tok := w.token(nil, srvAddr)
		c := w.mustDial("10.0.0.2:5000", tok)
		accept(t, l, time.Second)
		if _, err := w.dial("10.0.0.3:5000", tok, nil); !errors.Is(err, netcode.ErrConnectionRequestTimedOut) {
			t.Fatalf("second use while connected: %v", err)
		}
		c.Close()
		if _, err := w.dial("10.0.0.4:5000", tok, nil); !errors.Is(err, netcode.ErrConnectionRequestTimedOut) {
			t.Fatalf("use after disconnect: %v", err)
		}
		if n := l.ServerStats().Dropped[netcode.ServerDropTokenReused]; n == 0 {
			t.Error("no token-reuse drop counted")
		}
	})
}

func TestServerFull(t *testing.T) {
	scenario(t, 5, func(t *testing.T, w *world) {
		l := w.server(srvAddr, func(c *ServerConfig) { c.Netcode.MaxClients = 2 })
		w.mustDial("10.0.0.2:5000", w.token(nil, srvAddr))
		w.mustDial("10.0.0.3:5000", w.token(nil, srvAddr))
		if _, err := w.dial("10.0.0.4:5000", w.token(nil, srvAddr), nil); !errors.Is(err, netcode.ErrConnectionDenied) {
			t.Fatalf("third client: %v, want ErrConnectionDenied", err)
		}
		if n := l.ConnectedClients(); n != 2 {
			t.Fatalf("%d clients connected", n)
		}
	})
}

// TestFailover: the first server in the token is silent, so the client
// connects to the second.
func TestFailover(t *testing.T) {
	scenario(t, 6, func(t *testing.T, w *world) {
		const dead, live = "10.0.0.9:40000", "10.0.0.1:40000"
		l := w.server(live, nil)
		c := w.mustDial("10.0.0.2:5000", w.token(nil, dead, live))
		if got := c.RemoteAddr().String(); got != live {
			t.Fatalf("connected to %s, want %s", got, live)
		}
		s := accept(t, l, time.Second)
		echo(t, c, s, []byte("after fail-over"))
	})
}

// echo sends msg from a to b and checks it arrives.
func echo(t *testing.T, a, b *Conn, msg []byte) {
	t.Helper()
	if _, err := a.WriteMessage(msg, reliability.ReliableOrdered, 0, reliability.Medium); err != nil {
		t.Fatal(err)
	}
	m, err := b.ReadMessage()
	if err != nil || string(m.Data) != string(msg) {
		t.Fatalf("read %q, %v", m.Data, err)
	}
}

// TestTimeouts: when the path dies, both sides time out after the
// token's timeout, and the server reports why.
func TestTimeouts(t *testing.T) {
	scenario(t, 7, func(t *testing.T, w *world) {
		l := w.server(srvAddr, nil)
		c := w.mustDial("10.0.0.2:5000", w.token(func(p *netcode.TokenParams) { p.Timeout = 3 * time.Second }, srvAddr))
		s := accept(t, l, time.Second)
		ctx := context.Background()
		if ev, _ := l.NextEvent(ctx); ev.Kind != EventConnected {
			t.Fatalf("event %+v", ev)
		}
		start := time.Now()
		w.impair("10.0.0.2:5000", srvAddr, transport.Impairment{Loss: 1})
		<-c.Done()
		<-s.Done()
		if d := time.Since(start); d < 3*time.Second || d > 4*time.Second {
			t.Errorf("timed out after %v, want about 3 s", d)
		}
		if !errors.Is(c.Err(), ErrTimedOut) || !errors.Is(s.Err(), ErrTimedOut) {
			t.Errorf("client err %v, server err %v, want ErrTimedOut", c.Err(), s.Err())
		}
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, ErrTimedOut) {
			t.Errorf("client read after timeout: %v", err)
		}
		ev, _ := l.NextEvent(ctx)
		if ev.Kind != EventDisconnected || !errors.Is(ev.Reason, ErrTimedOut) || ev.ClientID != s.ClientID() {
			t.Errorf("event %+v", ev)
		}
	})
}

// TestGracefulCloseUnderLoss: whichever side closes, everything it wrote
// before arrives, then the other side reads io.EOF.
func TestGracefulCloseUnderLoss(t *testing.T) {
	for _, serverCloses := range []bool{false, true} {
		t.Run(fmt.Sprintf("server closes %v", serverCloses), func(t *testing.T) {
			scenario(t, 8, func(t *testing.T, w *world) {
				w.net.SetDefault(transport.Impairment{Latency: 15 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.2})
				l := w.server(srvAddr, nil)
				c := w.mustDial("10.0.0.2:5000", w.token(nil, srvAddr))
				s := accept(t, l, 5*time.Second)
				from, to := c, s
				if serverCloses {
					from, to = s, c
				}
				const n = 500
				for i := range n {
					msg := fmt.Appendf(nil, "message %d %0*d", i, i%1500, 0)
					if _, err := from.WriteMessage(msg, reliability.ReliableOrdered, uint8(i%3), reliability.Medium); err != nil {
						t.Fatal(err)
					}
				}
				if err := from.Close(); err != nil {
					t.Fatal(err)
				}
				next := [3]int{0, 1, 2}
				for range n {
					m, err := to.ReadMessage()
					if err != nil {
						t.Fatalf("read: %v", err)
					}
					var i int
					fmt.Sscanf(string(m.Data), "message %d", &i)
					if i != next[m.Channel] {
						t.Fatalf("channel %d: message %d, want %d", m.Channel, i, next[m.Channel])
					}
					next[m.Channel] += 3
				}
				if _, err := to.ReadMessage(); !errors.Is(err, io.EOF) {
					t.Fatalf("read after the last message: %v, want io.EOF", err)
				}
				if _, err := to.Write([]byte("x")); !errors.Is(err, ErrPeerClosed) {
					t.Fatalf("write after the peer closed: %v, want ErrPeerClosed", err)
				}
			})
		})
	}
}

// TestManyClients: 4096 clients connect to one server.
func TestManyClients(t *testing.T) {
	const n = MaxClients
	scenario(t, 9, func(t *testing.T, w *world) {
		// A backlog for every client: the accepting goroutine may lag
		// behind thousands of handshakes, and a full backlog drops
		// connections (ErrBacklogFull), which is not what this tests.
		l := w.server(srvAddr, func(c *ServerConfig) {
			c.Netcode.MaxClients = n
			c.AcceptBacklog = n
		})
		go func() {
			for {
				if _, err := l.AcceptConn(context.Background()); err != nil {
					return
				}
			}
		}()
		errs := make(chan error, n)
		for k := range n {
			tok := w.token(nil, srvAddr)
			addr := fmt.Sprintf("10.1.%d.%d:5000", k/250, k%250+1)
			go func() {
				_, err := w.dial(addr, tok, nil)
				errs <- err
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if got := l.ConnectedClients(); got != n {
			t.Fatalf("%d clients connected, want %d", got, n)
		}
	})
}

package session

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
)

// The scenarios run real Listeners and Dial'd Conns on the simulated
// network inside a synctest bubble: a fake clock and a fixed seed.

const testProtocolID = 0x1122334455667788

var testKey = netcode.Key{
	0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
	0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1,
}

type world struct {
	t      testing.TB
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

// server starts a Listener on addr and closes it at the end of the test.
func (w *world) server(addr string, mod func(*ServerConfig)) *Listener {
	w.t.Helper()
	cfg := ServerConfig{Netcode: netcode.ServerConfig{ProtocolID: testProtocolID, PrivateKey: testKey}}
	if mod != nil {
		mod(&cfg)
	}
	l, err := Listen(w.listen(addr), cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { l.Close() })
	return l
}

// token mints a token for a new client id for the servers in order.
func (w *world) token(mod func(*netcode.TokenParams), servers ...string) []byte {
	w.t.Helper()
	w.nextID++
	p := &netcode.TokenParams{ClientID: w.nextID, ProtocolID: testProtocolID, PrivateKey: testKey}
	p.UserData[0] = byte(w.nextID)
	for _, s := range servers {
		p.PublicAddresses = append(p.PublicAddresses, netip.MustParseAddrPort(s))
	}
	if mod != nil {
		mod(p)
	}
	b, err := netcode.GenerateConnectToken(p)
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

func (w *world) dial(addr string, token []byte, mod func(*ClientConfig)) (*Conn, error) {
	w.t.Helper()
	cfg := ClientConfig{Conn: w.listen(addr)}
	if mod != nil {
		mod(&cfg)
	}
	c, err := Dial(context.Background(), token, cfg)
	if err == nil {
		w.t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func (w *world) mustDial(addr string, token []byte) *Conn {
	w.t.Helper()
	c, err := w.dial(addr, token, nil)
	if err != nil {
		w.t.Fatalf("dial from %s: %v", addr, err)
	}
	return c
}

// impair sets both directions between a and b.
func (w *world) impair(a, b string, imp transport.Impairment) {
	x, y := netip.MustParseAddrPort(a), netip.MustParseAddrPort(b)
	w.net.SetLink(x, y, imp)
	w.net.SetLink(y, x, imp)
}

func accept(t testing.TB, l *Listener, d time.Duration) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c, err := l.AcceptConn(ctx)
	if err != nil {
		t.Fatalf("accept: %v", err)
	}
	return c
}

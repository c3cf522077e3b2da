package netcode

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport"
)

// errBroken is a permanent transport fault: not net.ErrClosed, not a
// timeout, and it never goes away.
var errBroken = errors.New("test: transport broken")

// How long, and for how many failed reads, a driver's reader retries
// reads that fail at once before giving up: waits of 1, 2, 4, ... 256 ms,
// then nine of 500 ms, between 20 reads (internal/driver's policy).
const (
	giveUpAfter = 5011 * time.Millisecond
	giveUpReads = 20
)

// breakableConn passes reads through to a transport.Conn until broken;
// from then on every read fails at once with the fault, as on a transport
// with a permanent error. Writes keep working.
type breakableConn struct {
	transport.Conn
	fault  atomic.Pointer[error]
	failed atomic.Int64 // reads failed with the fault
}

func (b *breakableConn) breakWith(err error) {
	b.fault.Store(&err)
	// Wake a read blocked in the inner conn; later reads return at once.
	b.Conn.SetReadDeadline(time.Unix(1, 0))
}

func (b *breakableConn) ReadFrom(p []byte) (int, netip.AddrPort, error) {
	n, from, err := b.Conn.ReadFrom(p)
	if errors.Is(err, net.ErrClosed) {
		return n, from, err
	}
	if f := b.fault.Load(); f != nil {
		b.failed.Add(1)
		return 0, netip.AddrPort{}, *f
	}
	return n, from, err
}

func checkTransportFailed(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrTransportFailed) || !errors.Is(err, errBroken) {
		t.Fatalf("%s = %v, want an error wrapping ErrTransportFailed and the transport's error", what, err)
	}
}

// TestServerConnGivesUpOnBrokenTransport: a transport whose reads fail at
// once every time makes the ServerConn back off, then give up: clients are
// disconnected, and Receive, NextEvent and Send report the fault once what
// came before is drained.
func TestServerConnGivesUpOnBrokenTransport(t *testing.T) {
	scenario(t, 40, func(t *testing.T, w *world) {
		bc := &breakableConn{Conn: w.listen(scServer)}
		s, err := ListenServer(bc, ServerConfig{ProtocolID: testProtocolID, PrivateKey: testServerKey})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// A long timeout, so the client's keep-alives going unread do not
		// time it out first.
		c := w.mustDial(scClient, w.token(func(p *TokenParams) { p.Timeout = 30 * time.Second }, scServer))
		if e := nextEvent(t, s, time.Second); e.Kind != EventConnected {
			t.Fatalf("event %+v", e)
		}
		if err := c.Send([]byte("before")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the server has read it

		bc.breakWith(errBroken)
		ctx := context.Background()
		if m, err := s.Receive(ctx); err != nil || string(m.Payload) != "before" {
			t.Fatalf("Receive = %q, %v", m.Payload, err)
		}
		took := elapsed(func() { _, err = s.Receive(ctx) })
		checkTransportFailed(t, "Receive", err)
		if took != giveUpAfter || bc.failed.Load() != giveUpReads {
			t.Fatalf("gave up after %v and %d failed reads, want %v and %d", took, bc.failed.Load(), giveUpAfter, giveUpReads)
		}
		if e := nextEvent(t, s, time.Second); e.Kind != EventDisconnected || e.Reason != ReasonServerDisconnected {
			t.Fatalf("event %+v", e)
		}
		_, err = s.NextEvent(ctx)
		checkTransportFailed(t, "NextEvent", err)
		checkTransportFailed(t, "Send", s.Send(0, []byte("after")))
		checkTransportFailed(t, "Disconnect", s.Disconnect(0))
		if err := bc.Conn.WriteTo([]byte{1}, netip.MustParseAddrPort(scClient)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("transport still open: write = %v", err)
		}
		// The server sent its disconnect packets before closing.
		if _, err := c.Receive(ctx); !errors.Is(err, ErrDisconnected) {
			t.Fatalf("client Receive = %v", err)
		}

		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Receive(ctx); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Receive after Close = %v", err)
		}
	})
}

// TestClientConnGivesUpOnBrokenTransport: the same for a connected
// ClientConn, which disconnects from the server as it gives up.
func TestClientConnGivesUpOnBrokenTransport(t *testing.T) {
	scenario(t, 41, func(t *testing.T, w *world) {
		s := w.server(scServer, ServerConfig{})
		bc := &breakableConn{Conn: w.listen(scClient)}
		// A long timeout, so the server's keep-alives going unread do not
		// time the client out first.
		tok := w.token(func(p *TokenParams) { p.Timeout = 30 * time.Second }, scServer)
		c, err := Dial(context.Background(), bc, tok, ClientConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		nextEvent(t, s, time.Second)
		if err := s.Send(c.ClientIndex(), []byte("before")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the client has read it

		bc.breakWith(errBroken)
		ctx := context.Background()
		if m, err := c.Receive(ctx); err != nil || string(m.Payload) != "before" {
			t.Fatalf("Receive = %q, %v", m.Payload, err)
		}
		took := elapsed(func() { _, err = c.Receive(ctx) })
		checkTransportFailed(t, "Receive", err)
		if took != giveUpAfter || bc.failed.Load() != giveUpReads {
			t.Fatalf("gave up after %v and %d failed reads, want %v and %d", took, bc.failed.Load(), giveUpAfter, giveUpReads)
		}
		checkTransportFailed(t, "Send", c.Send([]byte("after")))
		if c.State() != ClientDisconnected {
			t.Fatalf("state %v", c.State())
		}
		if e := nextEvent(t, s, time.Second); e.Kind != EventDisconnected || e.Reason != ReasonClientDisconnected {
			t.Fatalf("server event %+v", e)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Receive(ctx); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Receive after Close = %v", err)
		}
	})
}

// TestDialGivesUpOnBrokenTransport: Dial over a transport that never reads
// returns the fault instead of spinning until the token runs out.
func TestDialGivesUpOnBrokenTransport(t *testing.T) {
	scenario(t, 42, func(t *testing.T, w *world) {
		w.server(scServer, ServerConfig{})
		bc := &breakableConn{Conn: w.listen(scClient)}
		bc.breakWith(errBroken)
		tok := w.token(func(p *TokenParams) { p.Timeout = 30 * time.Second }, scServer)
		var err error
		took := elapsed(func() { _, err = Dial(context.Background(), bc, tok, ClientConfig{}) })
		checkTransportFailed(t, "Dial", err)
		if took != giveUpAfter {
			t.Fatalf("Dial gave up after %v, want %v", took, giveUpAfter)
		}
		if err := bc.Conn.WriteTo([]byte{1}, netip.MustParseAddrPort(scServer)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("transport still open: write = %v", err)
		}
	})
}

// TestCloseInterruptsReadBackoff: Close does not wait out a pause between
// failing reads.
func TestCloseInterruptsReadBackoff(t *testing.T) {
	scenario(t, 43, func(t *testing.T, w *world) {
		bc := &breakableConn{Conn: w.listen(scServer)}
		bc.breakWith(errBroken)
		s, err := ListenServer(bc, ServerConfig{ProtocolID: testProtocolID, PrivateKey: testServerKey})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := s.Receive(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Receive = %v, want the context's deadline", err)
		}
		// 1 s in, the read loop is in a 500 ms pause after its 11th failure.
		if n := bc.failed.Load(); n != 11 {
			t.Fatalf("%d failed reads in the first second, want 11", n)
		}
		if took := elapsed(func() { err = s.Close() }); took != 0 || err != nil {
			t.Fatalf("Close took %v and returned %v", took, err)
		}
		// synctest.Test fails if the read loop is still running.
	})
}

// slowFailConn makes every read that finds no datagram within every fail
// with errBroken, like ICMP errors trickling into an idle UDP socket.
type slowFailConn struct {
	transport.Conn
	every  time.Duration
	failed atomic.Int64
}

func (c *slowFailConn) ReadFrom(p []byte) (int, netip.AddrPort, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.every))
	n, from, err := c.Conn.ReadFrom(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.failed.Add(1)
		return 0, netip.AddrPort{}, errBroken
	}
	return n, from, err
}

// TestIsolatedReadErrorsDoNotAddUp: read errors that each come after the
// read waited a while are not a failing transport, however many there are;
// they cost no pause, and the server keeps serving.
func TestIsolatedReadErrorsDoNotAddUp(t *testing.T) {
	scenario(t, 44, func(t *testing.T, w *world) {
		sc := &slowFailConn{Conn: w.listen(scServer), every: 100 * time.Millisecond}
		s, err := ListenServer(sc, ServerConfig{ProtocolID: testProtocolID, PrivateKey: testServerKey})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// Half a read period past 10 s, so the count does not depend on
		// which of two goroutines due at the same instant runs first.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second+50*time.Millisecond)
		defer cancel()
		if _, err := s.Receive(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Receive = %v, want the context's deadline", err)
		}
		if n := sc.failed.Load(); n != 100 {
			t.Fatalf("%d failed reads in 10 s, want 100 (no pauses)", n)
		}
		c := w.mustDial(scClient, w.token(nil, scServer))
		nextEvent(t, s, time.Second)
		exchange(t, s, c)
	})
}

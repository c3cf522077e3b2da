package session

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/reliability"
)

func loopUserData(b byte) [netcode.UserDataBytes]byte {
	var u [netcode.UserDataBytes]byte
	u[0], u[netcode.UserDataBytes-1] = b, b
	return u
}

// nextEvent waits up to a second (of the bubble's clock) for an event.
func nextEvent(t *testing.T, l *Listener) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ev, err := l.NextEvent(ctx)
	if err != nil {
		t.Fatalf("NextEvent: %v", err)
	}
	return ev
}

// loopbackPlan is mixedPlan with 64 KiB messages in place of the 256 KiB
// one and every hundredth message split over many datagrams.
func loopbackPlan(seed uint64, n int) []planned {
	plan := mixedPlan(seed, n)
	for i := range plan {
		if plan[i].size > 64<<10 || i%100 == 7 {
			plan[i].size = 64 << 10
		}
	}
	return plan
}

// TestLoopbackExchange: a loopback client and its server side exchange
// 1,000 mixed messages each way (reliable-ordered on four channels,
// reliable, unreliable-sequenced, unreliable; 1 B to 64 KiB) without a
// datagram on the socket, occupying a slot and reserving the client id.
func TestLoopbackExchange(t *testing.T) {
	scenario(t, 11, func(t *testing.T, w *world) {
		l := w.server(srvAddr, nil)
		c, err := l.ConnectLoopback(42, loopUserData(7))
		if err != nil {
			t.Fatal(err)
		}
		s := accept(t, l, time.Second)
		if !s.Loopback() || !c.Loopback() || s.ClientIndex() != 0 || c.ClientIndex() != 0 ||
			s.ClientID() != 42 || c.ClientID() != 42 || s.UserData() != loopUserData(7) || c.UserData() != loopUserData(7) {
			t.Fatalf("server side %d/%d/%v, client side %d/%d/%v", s.ClientIndex(), s.ClientID(), s.Loopback(), c.ClientIndex(), c.ClientID(), c.Loopback())
		}
		ev := nextEvent(t, l)
		if ev != (Event{Kind: EventConnected, ClientIndex: 0, ClientID: 42, Loopback: true}) {
			t.Fatalf("event %+v", ev)
		}
		if n := l.ConnectedClients(); n != 1 {
			t.Fatalf("%d clients connected", n)
		}

		const messages = 1000
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for _, side := range []struct {
			c          *Conn
			seed, peer uint64
		}{{c, 1, 2}, {s, 2, 1}} {
			wg.Go(func() {
				errs <- exchange(side.c, side.seed, loopbackPlan(side.seed, messages), side.peer, loopbackPlan(side.peer, messages))
			})
		}
		wg.Wait()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if st := l.ServerStats(); st.PacketsSent != 0 || st.PacketsReceived != 0 {
			t.Fatalf("loopback traffic touched the socket: %d sent, %d received", st.PacketsSent, st.PacketsReceived)
		}
		st := c.Stats()
		if st.Reliability.MessagesSent < messages || st.PacketsSent != 0 {
			t.Fatalf("client side stats %+v", st)
		}
	})
}

// TestLoopbackReservesClientID: a network client with a token for the
// loopback client's id is refused, and a second loopback client with
// that id too.
func TestLoopbackReservesClientID(t *testing.T) {
	scenario(t, 12, func(t *testing.T, w *world) {
		l := w.server(srvAddr, nil)
		if _, err := l.ConnectLoopback(500, loopUserData(1)); err != nil {
			t.Fatal(err)
		}
		tok := w.token(func(p *netcode.TokenParams) { p.ClientID = 500 }, srvAddr)
		if _, err := w.dial("10.0.0.2:5000", tok, nil); !errors.Is(err, netcode.ErrConnectionRequestTimedOut) {
			t.Fatalf("Dial with the loopback client's id: %v", err)
		}
		if n := l.ServerStats().Dropped[netcode.ServerDropClientIDConnected]; n == 0 {
			t.Fatal("server counted no client-id-connected drop")
		}
		if _, err := l.ConnectLoopback(500, loopUserData(1)); !errors.Is(err, netcode.ErrClientIDConnected) {
			t.Fatalf("second loopback client with the same id: %v", err)
		}
		if n := l.ConnectedClients(); n != 1 {
			t.Fatalf("%d clients connected", n)
		}
	})
}

// TestLoopbackCloseClient: the client side closes; the server side reads
// everything written before, then io.EOF; the slot is freed and reusable.
func TestLoopbackCloseClient(t *testing.T) {
	scenario(t, 13, func(t *testing.T, w *world) {
		l := w.server(srvAddr, nil)
		c, err := l.ConnectLoopback(7, loopUserData(0))
		if err != nil {
			t.Fatal(err)
		}
		s := accept(t, l, time.Second)
		nextEvent(t, l)
		big := bytes.Repeat([]byte("0123456789abcdef"), 4<<10) // 64 KiB
		for i := range 20 {
			msg := append([]byte{byte(i)}, big...)
			if _, err := c.WriteMessage(msg, reliability.ReliableOrdered, uint8(i%3), reliability.Medium); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		next := map[uint8]int{}
		for range 20 {
			m, err := s.ReadMessage()
			if err != nil {
				t.Fatalf("server side read: %v", err)
			}
			i := int(m.Data[0])
			if i%3 != int(m.Channel) || i < next[m.Channel] || !bytes.Equal(m.Data[1:], big) {
				t.Fatalf("message %d on channel %d out of order or damaged", i, m.Channel)
			}
			next[m.Channel] = i + 1
		}
		if _, err := s.ReadMessage(); err != io.EOF {
			t.Fatalf("after the client closed: %v, want io.EOF", err)
		}
		<-s.Done()
		if !errors.Is(s.Err(), ErrPeerClosed) {
			t.Fatalf("server side Err %v", s.Err())
		}
		ev := nextEvent(t, l)
		if ev.Kind != EventDisconnected || !ev.Loopback || ev.ClientID != 7 || !errors.Is(ev.Reason, ErrPeerClosed) {
			t.Fatalf("event %+v", ev)
		}
		if n := l.ConnectedClients(); n != 0 {
			t.Fatalf("%d clients connected after close", n)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("write after close: %v", err)
		}
		// The id and the slot are free again.
		c2, err := l.ConnectLoopback(7, loopUserData(0))
		if err != nil {
			t.Fatal(err)
		}
		if c2.ClientIndex() != 0 {
			t.Fatalf("reconnected in slot %d", c2.ClientIndex())
		}
	})
}

// TestLoopbackCloseServer: the server side closes; the client side reads
// everything written before, then io.EOF.
func TestLoopbackCloseServer(t *testing.T) {
	scenario(t, 14, func(t *testing.T, w *world) {
		l := w.server(srvAddr, nil)
		c, err := l.ConnectLoopback(8, loopUserData(0))
		if err != nil {
			t.Fatal(err)
		}
		s := accept(t, l, time.Second)
		nextEvent(t, l)
		want := bytes.Repeat([]byte("loopback "), 30000) // several messages' worth
		if _, err := s.Write(want); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("client side ReadAll: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("client side read %d bytes, want %d", len(got), len(want))
		}
		<-c.Done()
		if !errors.Is(c.Err(), ErrPeerClosed) {
			t.Fatalf("client side Err %v", c.Err())
		}
		ev := nextEvent(t, l)
		if ev.Kind != EventDisconnected || !ev.Loopback || ev.Reason != nil {
			t.Fatalf("event %+v", ev)
		}
		if n := l.ConnectedClients(); n != 0 {
			t.Fatalf("%d clients connected after close", n)
		}
	})
}

// TestLoopbackBesideNetworkClient: a network client and a loopback client
// share a server; each talks to its server side, and the slots and ids
// stay apart.
func TestLoopbackBesideNetworkClient(t *testing.T) {
	scenario(t, 15, func(t *testing.T, w *world) {
		l := w.server(srvAddr, func(cfg *ServerConfig) { cfg.Netcode.MaxClients = 2 })
		nc := w.mustDial("10.0.0.2:5000", w.token(nil, srvAddr))
		ns := accept(t, l, time.Second)
		lc, err := l.ConnectLoopback(9000, loopUserData(3))
		if err != nil {
			t.Fatal(err)
		}
		ls := accept(t, l, time.Second)
		if ns.Loopback() || !ls.Loopback() || ns.ClientIndex() != 0 || ls.ClientIndex() != 1 || lc.ClientIndex() != 1 {
			t.Fatalf("network slot %d, loopback slot %d", ns.ClientIndex(), ls.ClientIndex())
		}
		if ev := nextEvent(t, l); ev.Loopback {
			t.Fatalf("network client's event %+v", ev)
		}
		if ev := nextEvent(t, l); !ev.Loopback || ev.ClientIndex != 1 {
			t.Fatalf("loopback client's event %+v", ev)
		}
		// Full now: neither kind of client gets in.
		if _, err := l.ConnectLoopback(9001, loopUserData(3)); !errors.Is(err, ErrServerFull) {
			t.Fatalf("ConnectLoopback on a full server: %v", err)
		}
		if _, err := w.dial("10.0.0.3:5000", w.token(nil, srvAddr), nil); !errors.Is(err, netcode.ErrConnectionDenied) {
			t.Fatalf("Dial to a full server: %v", err)
		}

		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for _, side := range []struct {
			c          *Conn
			seed, peer uint64
		}{{nc, 10, 20}, {ns, 20, 10}, {lc, 30, 40}, {ls, 40, 30}} {
			wg.Go(func() {
				errs <- exchange(side.c, side.seed, loopbackPlan(side.seed, 300), side.peer, loopbackPlan(side.peer, 300))
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}

		// The loopback client leaving frees only its slot.
		lc.Close()
		<-ls.Done()
		if n := l.ConnectedClients(); n != 1 {
			t.Fatalf("%d clients connected", n)
		}
		if _, err := nc.Write([]byte("still here")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 32)
		n, err := ns.Read(buf)
		if err != nil || string(buf[:n]) != "still here" {
			t.Fatalf("network client after the loopback one left: %q, %v", buf[:n], err)
		}
	})
}

// TestLoopbackListenerClose: closing the Listener ends both sides of a
// loopback client, the client side reading io.EOF after what the server
// side wrote, and ConnectLoopback fails from then on.
func TestLoopbackListenerClose(t *testing.T) {
	scenario(t, 16, func(t *testing.T, w *world) {
		l := w.server(srvAddr, nil)
		var clients []*Conn
		for id := range uint64(3) {
			c, err := l.ConnectLoopback(100+id, loopUserData(byte(id)))
			if err != nil {
				t.Fatal(err)
			}
			s := accept(t, l, time.Second)
			if _, err := s.Write([]byte("bye")); err != nil {
				t.Fatal(err)
			}
			clients = append(clients, c)
		}
		l.Close()
		for k, c := range clients {
			select {
			case <-c.Done():
			default:
				t.Fatalf("client %d still open after Listener.Close", k)
			}
			b, err := io.ReadAll(c)
			if err != nil || string(b) != "bye" {
				t.Fatalf("client %d read %q, %v", k, b, err)
			}
		}
		if _, err := l.ConnectLoopback(200, loopUserData(0)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("ConnectLoopback after Close: %v", err)
		}
	})
}

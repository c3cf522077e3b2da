package netcode

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

func loopbackUserData(b byte) [UserDataBytes]byte {
	var u [UserDataBytes]byte
	u[0], u[UserDataBytes-1] = b, b
	return u
}

func TestServerLoopbackConnect(t *testing.T) {
	h := newServerHarness(t, ServerConfig{MaxClients: 4})
	if err := h.s.ConnectLoopbackClient(2, 77, loopbackUserData(9)); err != nil {
		t.Fatal(err)
	}
	ev := h.s.Events()
	want := Event{Kind: EventConnected, ClientIndex: 2, ClientID: 77, Loopback: true}
	if len(ev) != 1 || ev[0] != want {
		t.Fatalf("events %+v, want %+v", ev, want)
	}
	if out := h.s.Outgoing(); len(out) != 0 {
		t.Fatalf("a loopback connect sent %d datagrams", len(out))
	}
	if !h.s.ClientConnected(2) || !h.s.ClientLoopback(2) || h.s.ClientLoopback(0) || h.s.ClientLoopback(-1) || h.s.ClientLoopback(4) {
		t.Fatal("ClientConnected/ClientLoopback")
	}
	info, ok := h.s.Client(2)
	if !ok || info.ClientID != 77 || !info.Loopback || !info.Confirmed || info.Address.IsValid() || info.UserData != loopbackUserData(9) {
		t.Fatalf("client info %+v", info)
	}
	if i, ok := h.s.ClientIndex(77); !ok || i != 2 {
		t.Fatal("ClientIndex does not find the loopback client")
	}
	if h.s.ConnectedClients() != 1 || h.s.Stats().Connects != 1 {
		t.Fatalf("connected %d, connects %d", h.s.ConnectedClients(), h.s.Stats().Connects)
	}

	// A network client takes the lowest slot the loopback client left.
	c := h.client("198.51.100.7:5000")
	if i := c.connect(); i != 0 {
		t.Fatalf("network client in slot %d, want 0", i)
	}
}

func TestServerLoopbackErrors(t *testing.T) {
	h := newServerHarness(t, ServerConfig{MaxClients: 2})
	var u [UserDataBytes]byte
	for _, i := range []int{-1, 2} {
		if err := h.s.ConnectLoopbackClient(i, 1, u); !errors.Is(err, ErrClientIndex) {
			t.Fatalf("ConnectLoopbackClient(%d): %v", i, err)
		}
		if err := h.s.DisconnectLoopbackClient(i); !errors.Is(err, ErrClientIndex) {
			t.Fatalf("DisconnectLoopbackClient(%d): %v", i, err)
		}
	}
	if err := h.s.DisconnectLoopbackClient(0); !errors.Is(err, ErrClientNotConnected) {
		t.Fatalf("DisconnectLoopbackClient on an empty slot: %v", err)
	}
	if err := h.s.ConnectLoopbackClient(0, 1, u); err != nil {
		t.Fatal(err)
	}
	if err := h.s.ConnectLoopbackClient(0, 2, u); !errors.Is(err, ErrSlotOccupied) {
		t.Fatalf("occupied slot: %v", err)
	}
	if err := h.s.ConnectLoopbackClient(1, 1, u); !errors.Is(err, ErrClientIDConnected) {
		t.Fatalf("client id in use: %v", err)
	}
	if err := h.s.SendPayload(0, []byte("x")); !errors.Is(err, ErrLoopbackClient) {
		t.Fatalf("SendPayload to a loopback client: %v", err)
	}
	if _, _, ok := h.s.ReceivePayload(0); ok {
		t.Fatal("payload from a loopback client")
	}

	c := h.client("198.51.100.7:5000")
	i := c.connect()
	if err := h.s.DisconnectLoopbackClient(i); !errors.Is(err, ErrNotLoopbackClient) {
		t.Fatalf("DisconnectLoopbackClient on a network client: %v", err)
	}
	if got := h.s.ConnectedClients(); got != 2 {
		t.Fatalf("failed calls changed the count: %d", got)
	}

	h.s.Stop(h.now)
	if err := h.s.ConnectLoopbackClient(0, 1, u); !errors.Is(err, ErrServerNotRunning) {
		t.Fatalf("stopped: %v", err)
	}
	if err := h.s.DisconnectLoopbackClient(0); !errors.Is(err, ErrServerNotRunning) {
		t.Fatalf("stopped: %v", err)
	}
}

// A connect token for the loopback client's id is refused at the request
// and, for a handshake that was under way, at the response.
func TestServerLoopbackReservesClientID(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	early := h.client("198.51.100.1:1")
	early.challenge()
	id := h.nextID // the id early's token was minted for
	if err := h.s.ConnectLoopbackClient(0, id, [UserDataBytes]byte{}); err != nil {
		t.Fatal(err)
	}
	h.expectDrop(ServerDropClientIDConnected, func() { early.deliver(early.responsePacket()) })

	p := h.tokenParams(netip.AddrPort{})
	p.ClientID = id
	late := h.clientWith("198.51.100.2:1", p)
	h.expectDrop(ServerDropClientIDConnected, func() { late.deliver(late.requestPacket()) })

	// Freed, the id can connect again: the pending handshake completes.
	if err := h.s.DisconnectLoopbackClient(0); err != nil {
		t.Fatal(err)
	}
	early.deliver(early.responsePacket())
	early.expect(ConnectionKeepAlive)
}

// A loopback slot has no keep-alives and no timeout, and adds nothing to
// NextTimeout.
func TestServerLoopbackNoTimers(t *testing.T) {
	h := newServerHarness(t, ServerConfig{})
	if err := h.s.ConnectLoopbackClient(0, 5, [UserDataBytes]byte{}); err != nil {
		t.Fatal(err)
	}
	if next := h.s.NextTimeout(); !next.IsZero() {
		t.Fatalf("NextTimeout %v with only a loopback client", next)
	}
	for range 100 {
		h.advance(time.Second)
		h.s.Update(h.now)
		if out := h.s.Outgoing(); len(out) != 0 {
			t.Fatalf("%d datagrams for a loopback client", len(out))
		}
	}
	if !h.s.ClientConnected(0) || len(h.s.Events()) != 1 {
		t.Fatal("the loopback client timed out")
	}

	// Beside a network client, NextTimeout names the network client's
	// deadlines only.
	c := h.client("198.51.100.7:5000")
	i := c.connect()
	want := h.now.Add(KeepAliveInterval)
	if next := h.s.NextTimeout(); !next.Equal(want) {
		t.Fatalf("NextTimeout %v, want %v", next, want)
	}
	h.s.Update(h.now)
	if next := h.s.NextTimeout(); !next.Equal(want) {
		t.Fatalf("after Update: NextTimeout %v, want %v", next, want)
	}
	// The network client times out; the loopback client stays, and
	// NextTimeout falls back to zero.
	h.advance(5 * time.Second)
	h.s.Update(h.now)
	h.outgoing()
	if h.s.ClientConnected(i) || !h.s.ClientConnected(0) {
		t.Fatal("wrong client timed out")
	}
	if next := h.s.NextTimeout(); !next.IsZero() {
		t.Fatalf("NextTimeout %v after the network client left", next)
	}
}

func TestServerLoopbackDisconnect(t *testing.T) {
	h := newServerHarness(t, ServerConfig{MaxClients: 3})
	var u [UserDataBytes]byte
	for i, id := range []uint64{10, 11} {
		if err := h.s.ConnectLoopbackClient(i, id, u); err != nil {
			t.Fatal(err)
		}
	}
	c := h.client("198.51.100.7:5000")
	if i := c.connect(); i != 2 {
		t.Fatalf("network client in slot %d", i)
	}
	h.s.Events()

	if err := h.s.DisconnectLoopbackClient(0); err != nil {
		t.Fatal(err)
	}
	if out := h.s.Outgoing(); len(out) != 0 {
		t.Fatalf("DisconnectLoopbackClient sent %d datagrams", len(out))
	}
	ev := h.s.Events()
	want := Event{Kind: EventDisconnected, ClientIndex: 0, ClientID: 10, Reason: ReasonServerDisconnected, Loopback: true}
	if len(ev) != 1 || ev[0] != want {
		t.Fatalf("events %+v, want %+v", ev, want)
	}
	if h.s.ClientConnected(0) || h.s.ClientLoopback(0) || h.s.ConnectedClients() != 2 {
		t.Fatal("slot not freed")
	}
	if _, ok := h.s.ClientIndex(10); ok {
		t.Fatal("client id still reserved")
	}
	// The freed slot holds no trace of the loopback client: a network
	// client takes it and gets its keep-alives.
	d := h.client("198.51.100.8:5000")
	if i := d.connect(); i != 0 {
		t.Fatalf("new client in slot %d", i)
	}
	if h.s.ClientLoopback(0) {
		t.Fatal("network client in a recycled slot reported as loopback")
	}
	h.s.Events()

	// DisconnectClient frees a loopback slot without packets too.
	if err := h.s.DisconnectClient(1); err != nil {
		t.Fatal(err)
	}
	if out := h.s.Outgoing(); len(out) != 0 {
		t.Fatalf("DisconnectClient on a loopback client sent %d datagrams", len(out))
	}
	if ev := h.s.Events(); len(ev) != 1 || !ev[0].Loopback || ev[0].ClientIndex != 1 {
		t.Fatalf("events %+v", ev)
	}

	// Stop frees loopback slots with the rest, packets only for the
	// network clients.
	if err := h.s.ConnectLoopbackClient(1, 12, u); err != nil {
		t.Fatal(err)
	}
	h.s.Events()
	h.s.Stop(h.now)
	disconnects := map[netip.AddrPort]int{}
	for _, dg := range h.s.Outgoing() {
		disconnects[dg.Addr]++
	}
	if len(disconnects) != 2 || disconnects[c.addr] != RedundantDisconnectCount || disconnects[d.addr] != RedundantDisconnectCount {
		t.Fatalf("disconnect packets by address %v", disconnects)
	}
	loopback := 0
	for _, e := range h.s.Events() {
		if e.Kind != EventDisconnected {
			t.Fatalf("event %+v", e)
		}
		if e.Loopback {
			loopback++
			if e.ClientIndex != 1 || e.ClientID != 12 {
				t.Fatalf("loopback event %+v", e)
			}
		}
	}
	if loopback != 1 || h.s.ConnectedClients() != 0 {
		t.Fatalf("%d loopback disconnects, %d still connected", loopback, h.s.ConnectedClients())
	}
	// Restarted, the server has every slot free.
	if err := h.s.Start(h.now); err != nil {
		t.Fatal(err)
	}
	if err := h.s.ConnectLoopbackClient(1, 12, u); err != nil {
		t.Fatal(err)
	}
}

// The full-server check counts loopback slots.
func TestServerLoopbackFillsServer(t *testing.T) {
	h := newServerHarness(t, ServerConfig{MaxClients: 1})
	if err := h.s.ConnectLoopbackClient(0, 1, [UserDataBytes]byte{}); err != nil {
		t.Fatal(err)
	}
	c := h.client("198.51.100.7:5000")
	c.deliver(c.requestPacket())
	c.expect(ConnectionDenied)
}

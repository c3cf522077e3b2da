package netcode

import (
	"testing"
)

// FuzzServerReceive feeds arbitrary datagrams to a server with one client
// connected and one handshake pending. The server must not panic, must
// never answer with a datagram as large as the one it received (no
// amplification), and must keep its slot accounting consistent.
func FuzzServerReceive(f *testing.F) {
	for _, p := range loadVectors(f).Packets {
		f.Add([]byte(p.Bytes), uint8(2))
	}
	seedT := &testing.T{}
	seed := newServerHarness(seedT, ServerConfig{})
	seed.t = seedT
	sc := seed.client("198.51.100.7:5000")
	f.Add(sc.requestPacket(), uint8(0))
	f.Add(sc.seal(Packet{Type: ConnectionKeepAlive}), uint8(1))
	f.Add(sc.seal(Packet{Type: ConnectionPayload, Payload: []byte("x")}), uint8(1))
	f.Add(sc.seal(Packet{Type: ConnectionDisconnect}), uint8(1))

	f.Fuzz(func(t *testing.T, pkt []byte, from uint8) {
		h := newServerHarness(t, ServerConfig{MaxClients: 2})
		connected := h.client("198.51.100.7:5000")
		connected.connect()
		pending := h.client("198.51.100.8:5000")
		pending.challenge()
		h.s.Events()

		addrs := []*testClient{pending, connected, h.client("198.51.100.9:5000")}
		c := addrs[int(from)%len(addrs)]
		in := append([]byte(nil), pkt...)
		h.s.Receive(in, c.addr, h.now)
		for _, d := range h.s.Outgoing() {
			if len(d.Data) >= len(pkt) {
				t.Fatalf("answered %d bytes with %d", len(pkt), len(d.Data))
			}
		}
		if n := h.s.ConnectedClients(); n < 0 || n > h.s.MaxClients() || n != len(h.s.byAddr) || n != len(h.s.byID) {
			t.Fatalf("slot accounting: %d connected, %d by address, %d by id", n, len(h.s.byAddr), len(h.s.byID))
		}
		h.advance(KeepAliveInterval)
		h.s.Update(h.now)
	})
}

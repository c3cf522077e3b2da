package netcode

import (
	"bytes"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

// BenchmarkServerConnectionRequest measures Server.Receive for a
// connection request: a valid one (decrypt the token, check it, answer with
// a challenge) against the cheap rejects, which must not decrypt.
func BenchmarkServerConnectionRequest(b *testing.B) {
	t := &testing.T{}
	h := newServerHarness(t, ServerConfig{})
	h.t = t
	c := h.client("198.51.100.7:5000")
	valid := c.requestPacket()
	badVersion := bytes.Clone(valid)
	badVersion[3] = 'x'
	badProtocol := bytes.Clone(valid)
	badProtocol[14] ^= 1
	expiredAt := time.Unix(int64(c.tok.ExpireTimestamp), 0)
	cases := []struct {
		name string
		pkt  []byte
		now  time.Time
		drop ServerDropReason
	}{
		{"valid", valid, h.now, NumServerDropReasons},
		{"bad_size", valid[:ConnectionRequestBytes-1], h.now, ServerDropPacketSize},
		{"bad_version", badVersion, h.now, ServerDropVersion},
		{"bad_protocol_id", badProtocol, h.now, ServerDropProtocolID},
		{"expired", valid, expiredAt, ServerDropTokenExpired},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			before := h.s.Stats()
			b.ReportAllocs()
			for b.Loop() {
				h.s.Receive(tc.pkt, c.addr, tc.now)
				h.s.Outgoing()
			}
			after := h.s.Stats()
			if tc.drop == NumServerDropReasons {
				if after.ChallengesSent == before.ChallengesSent || after.Dropped.Total() != before.Dropped.Total() {
					b.Fatal("valid request was not answered")
				}
			} else if after.Dropped[tc.drop] == before.Dropped[tc.drop] {
				b.Fatalf("not dropped as %v", tc.drop)
			}
		})
	}
}

// BenchmarkServerTick measures one 60 Hz server tick with every slot
// connected: each client's 100-byte payload is received and drained, a
// 100-byte payload is sent to each client, then Update runs and the outbox
// is drained. ns/op is the CPU time of one tick. Client packets are sealed
// in advance so only server work is measured.
func BenchmarkServerTick(b *testing.B) {
	for _, n := range []int{256, 1024, 4096} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			t := &testing.T{}
			h := newServerHarness(t, ServerConfig{MaxClients: n})
			h.t = t
			clients := make([]*testClient, n)
			for k := range clients {
				clients[k] = h.client(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(k >> 16), byte(k >> 8), byte(k)}), 7000).String())
				clients[k].connect()
			}
			if t.Failed() || h.s.ConnectedClients() != n {
				b.Fatal("setup failed")
			}
			const ring = 32
			payload := payloadVector(100)
			sealed := make([][][]byte, ring)
			for r := range sealed {
				sealed[r] = make([][]byte, n)
				for k, c := range clients {
					sealed[r][k] = c.seal(Packet{Type: ConnectionPayload, Payload: payload})
				}
			}
			buf := make([]byte, MaxPacketBytes)
			r := 0
			tick := func() {
				if r == ring {
					// Start the ring over; the replay windows must forget it.
					for k := range clients {
						h.s.slots[k].replay.Reset()
					}
					r = 0
				}
				h.advance(time.Second / 60)
				for k, c := range clients {
					h.s.Receive(buf[:copy(buf, sealed[r][k])], c.addr, h.now)
					if _, _, ok := h.s.ReceivePayload(k); !ok {
						b.Fatal("payload lost")
					}
					if err := h.s.SendPayload(k, payload); err != nil {
						b.Fatal(err)
					}
				}
				h.s.Update(h.now)
				h.s.Outgoing()
				r++
			}
			// The first ticks allocate the receive queues and grow both
			// outbox buffers.
			tick()
			tick()
			b.ReportAllocs()
			for b.Loop() {
				tick()
			}
		})
	}
}

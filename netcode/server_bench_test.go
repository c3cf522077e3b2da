package netcode

import (
	"bytes"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/netrak/netrak/transport/simnet"
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

// BenchmarkServerLoad runs one 60 Hz tick of a server with n connected
// clients, all real sans-I/O cores: every client sends a 100-byte payload
// and runs Update; the server receives and drains every payload, sends a
// 100-byte payload to every client, runs Update and hands over its
// datagrams; every client receives and drains. ns/op is the whole tick,
// clients included; server-ns/tick is the server's share alone, the CPU
// time a real server would spend per tick (minus socket I/O).
func BenchmarkServerLoad(b *testing.B) {
	for _, n := range []int{256, 1024, 4096} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			now := testEpoch
			s := newLoadServer(b, n, now)
			clients := make([]*Client, n)
			addrs := make([]netip.AddrPort, n)
			byAddr := make(map[netip.AddrPort]*Client, n)
			for k := range clients {
				clients[k], _ = NewClient(ClientConfig{})
				addrs[k] = loadClientAddr(k)
				byAddr[addrs[k]] = clients[k]
				connectLoadClient(b, clients[k], k, now)
			}
			payload := make([]byte, 100)
			var serverTime time.Duration
			var in []Datagram
			tick := func() {
				now = now.Add(time.Second / 60)
				in = in[:0]
				for k, c := range clients {
					if c.State() == ClientConnected {
						c.SendPayload(payload)
					}
					c.Update(now)
					// Each client's datagrams stay valid until its next
					// Outgoing, a tick later.
					for _, d := range c.Outgoing() {
						in = append(in, Datagram{Data: d.Data, Addr: addrs[k]})
					}
				}
				start := time.Now()
				for _, d := range in {
					s.Receive(d.Data, d.Addr, now)
				}
				out := loadServerTick(s, payload, now)
				serverTime += time.Since(start)
				for _, d := range out {
					c := byAddr[d.Addr]
					c.Receive(d.Data, testServerAddr, now)
					for {
						if _, _, ok := c.ReceivePayload(); !ok {
							break
						}
					}
				}
			}
			for range 30 {
				tick()
			}
			for k, c := range clients {
				if c.State() != ClientConnected {
					b.Fatalf("client %d: %v", k, c.State())
				}
			}
			measureLoad(b, n, tick, &serverTime)
		})
	}
}

// BenchmarkServerLoadSimnet is BenchmarkServerLoad with every datagram
// carried by the simulated network: the server and each client own a
// transport/simnet endpoint on a lossless, zero-latency network, and the
// benchmark goroutine drives the sans-I/O cores, writing what Outgoing
// returns and reading what arrived. One op is one 60 Hz tick: every client
// sends a 100-byte payload and runs Update; the server reads and handles
// every datagram, drains every payload, sends a 100-byte payload to every
// client, runs Update and writes its datagrams; every client reads and
// drains. ns/op is the whole tick, clients and simulator included;
// server-ns/tick is the server's share from its first read to its last
// write, simulated socket calls included.
//
// Zero-latency delivery happens inside WriteTo, so each endpoint's queue
// holds exactly the datagrams written to it. Reads take exactly that many:
// draining until a read fails would charge every endpoint a net.OpError
// allocation per tick, a cost of the simulator's deadline path that a
// server blocked in a reader goroutine does not pay. Every endpoint has a
// read deadline in the past, so a miscount fails instead of blocking.
func BenchmarkServerLoadSimnet(b *testing.B) {
	for _, n := range []int{256, 1024, 4096} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			// Clients connect in batches so each tick of the setup opens
			// a bounded number of connect tokens.
			const batch = 512
			now := testEpoch
			past := time.Unix(1, 0)
			network := simnet.New(1)
			defer network.Close()
			// The server's queue takes one datagram per client per tick.
			network.SetReceiveQueue(n + 64)
			srvConn, err := network.Listen(testServerAddr)
			if err != nil {
				b.Fatal(err)
			}
			srvConn.SetReadDeadline(past)
			s := newLoadServer(b, n, now)
			clients := make([]*Client, n)
			conns := make([]*simnet.Conn, n)
			index := make(map[netip.AddrPort]int, n)
			for k := range clients {
				clients[k], _ = NewClient(ClientConfig{})
				addr := loadClientAddr(k)
				if conns[k], err = network.Listen(addr); err != nil {
					b.Fatal(err)
				}
				conns[k].SetReadDeadline(past)
				index[addr] = k
			}

			payload := make([]byte, 100)
			buf := make([]byte, 2*MaxPacketBytes)
			pending := make([]int, n) // datagrams queued at each client
			var serverTime time.Duration
			read := func(c *simnet.Conn) (int, netip.AddrPort) {
				m, from, err := c.ReadFrom(buf)
				if err != nil {
					b.Fatalf("%v: expected datagram: %v", c.LocalAddr(), err)
				}
				return m, from
			}
			tick := func() {
				now = now.Add(time.Second / 60)
				sent := 0
				for k, c := range clients {
					if c.State() == ClientConnected {
						c.SendPayload(payload)
					}
					c.Update(now)
					for _, d := range c.Outgoing() {
						if err := conns[k].WriteTo(d.Data, d.Addr); err != nil {
							b.Fatal(err)
						}
						sent++
					}
				}
				start := time.Now()
				for range sent {
					m, from := read(srvConn)
					s.Receive(buf[:m], from, now)
				}
				out := loadServerTick(s, payload, now)
				for _, d := range out {
					if err := srvConn.WriteTo(d.Data, d.Addr); err != nil {
						b.Fatal(err)
					}
				}
				serverTime += time.Since(start)
				for _, d := range out {
					pending[index[d.Addr]]++
				}
				for k, c := range clients {
					for ; pending[k] > 0; pending[k]-- {
						m, from := read(conns[k])
						c.Receive(buf[:m], from, now)
					}
					for {
						if _, _, ok := c.ReceivePayload(); !ok {
							break
						}
					}
				}
			}

			for first := 0; first < n; first += batch {
				last := min(first+batch, n)
				for k := first; k < last; k++ {
					connectLoadClient(b, clients[k], k, now)
				}
				for range 30 {
					tick()
				}
				for k := first; k < last; k++ {
					if st := clients[k].State(); st != ClientConnected {
						b.Fatalf("client %d: %v", k, st)
					}
				}
			}
			if s.ConnectedClients() != n {
				b.Fatalf("%d clients connected, want %d", s.ConnectedClients(), n)
			}
			before := network.Stats()
			measureLoad(b, n, tick, &serverTime)

			// Every datagram sent was delivered and read, and every client
			// stayed connected.
			after := network.Stats()
			if sent, got := after.Sent-before.Sent, after.Delivered-before.Delivered; sent != got || sent < uint64(2*n*b.N) {
				b.Fatalf("%d datagrams sent, %d delivered, over %d ticks", sent, got, b.N)
			}
			for _, c := range append(conns, srvConn) {
				if _, _, err := c.ReadFrom(buf); err == nil {
					b.Fatalf("%v: datagram left unread", c.LocalAddr())
				}
			}
			if s.ConnectedClients() != n {
				b.Fatalf("%d clients connected after the run, want %d", s.ConnectedClients(), n)
			}
		})
	}
}

// newLoadServer starts a server with n slots for the load benchmarks.
func newLoadServer(b *testing.B, n int, now time.Time) *Server {
	s, err := NewServer(ServerConfig{ProtocolID: testProtocolID, PrivateKey: testServerKey, PublicAddress: testServerAddr, MaxClients: n})
	if err != nil {
		b.Fatal(err)
	}
	s.Start(now)
	return s
}

// loadClientAddr is the address of the load benchmarks' client k.
func loadClientAddr(k int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(k >> 16), byte(k >> 8), byte(k)}), 7000)
}

// loadServerTick is the server's work in a load benchmark's tick once the
// datagrams are in: it drains every slot's payloads, sends payload to every
// connected client, runs Update and hands over its datagrams.
func loadServerTick(s *Server, payload []byte, now time.Time) []Datagram {
	for k := range s.MaxClients() {
		for {
			if _, _, ok := s.ReceivePayload(k); !ok {
				break
			}
		}
		if s.ClientConnected(k) {
			s.SendPayload(k, payload)
		}
	}
	s.Update(now)
	return s.Outgoing()
}

// measureLoad runs the load benchmark's tick, which adds the server's
// share of it to *serverTime, and reports that share per tick and per
// client.
func measureLoad(b *testing.B, n int, tick func(), serverTime *time.Duration) {
	*serverTime = 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tick()
	}
	b.ReportMetric(float64(serverTime.Nanoseconds())/float64(b.N), "server-ns/tick")
	b.ReportMetric(float64(serverTime.Nanoseconds())/float64(b.N)/float64(n), "server-ns/client")
}

// connectLoadClient starts client k of a load benchmark connecting to the
// load server with a token of its own.
func connectLoadClient(b *testing.B, c *Client, k int, now time.Time) {
	tok, err := GenerateConnectToken(&TokenParams{ClientID: uint64(k), PublicAddresses: []netip.AddrPort{testServerAddr},
		ProtocolID: testProtocolID, PrivateKey: testServerKey, Now: now})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Connect(tok, now); err != nil {
		b.Fatal(err)
	}
}

package netcode

import (
	"net/netip"
	"strconv"
	"testing"
	"time"
)

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
			s, err := NewServer(ServerConfig{ProtocolID: testProtocolID, PrivateKey: testServerKey, PublicAddress: testServerAddr, MaxClients: n})
			if err != nil {
				b.Fatal(err)
			}
			s.Start(now)
			clients := make([]*Client, n)
			addrs := make([]netip.AddrPort, n)
			byAddr := make(map[netip.AddrPort]*Client, n)
			for k := range clients {
				clients[k], _ = NewClient(ClientConfig{})
				addrs[k] = netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(k >> 16), byte(k >> 8), byte(k)}), 7000)
				byAddr[addrs[k]] = clients[k]
				tok, err := GenerateConnectToken(&TokenParams{ClientID: uint64(k), PublicAddresses: []netip.AddrPort{testServerAddr},
					ProtocolID: testProtocolID, PrivateKey: testServerKey, Now: now})
				if err != nil {
					b.Fatal(err)
				}
				if err := clients[k].Connect(tok, now); err != nil {
					b.Fatal(err)
				}
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
				for k := range n {
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
				out := s.Outgoing()
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
			serverTime = 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				tick()
			}
			b.ReportMetric(float64(serverTime.Nanoseconds())/float64(b.N), "server-ns/tick")
			b.ReportMetric(float64(serverTime.Nanoseconds())/float64(b.N)/float64(n), "server-ns/client")
		})
	}
}

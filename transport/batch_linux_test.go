package transport

import (
	"net"
	"testing"

	"golang.org/x/net/ipv4"
)

// BenchmarkUDPBatch compares 32 datagrams of 1200 bytes sent and received
// one call each (the path UDPConn uses) with sendmmsg/recvmmsg batches from
// golang.org/x/net/ipv4, over IPv4 loopback. It decides whether UDPConn
// should batch; ns/op is per datagram in both.
func BenchmarkUDPBatch(b *testing.B) {
	const batch, size = 32, 1200
	b.Run("single", func(b *testing.B) {
		a := listenUDP(b, "udp4", "127.0.0.1:0", UDPConfig{})
		c := listenUDP(b, "udp4", "127.0.0.1:0", UDPConfig{})
		msg, buf := make([]byte, size), make([]byte, 1500)
		to := c.LocalAddr()
		b.SetBytes(size)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%batch == 0 {
				for range batch {
					if err := a.WriteTo(msg, to); err != nil {
						b.Fatal(err)
					}
				}
			}
			if _, _, err := c.ReadFrom(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mmsg", func(b *testing.B) {
		a := listenUDP(b, "udp4", "127.0.0.1:0", UDPConfig{})
		c := listenUDP(b, "udp4", "127.0.0.1:0", UDPConfig{})
		pa, pc := ipv4.NewPacketConn(a.UDP()), ipv4.NewPacketConn(c.UDP())
		to := net.UDPAddrFromAddrPort(c.LocalAddr())
		out, in := make([]ipv4.Message, batch), make([]ipv4.Message, batch)
		for i := range batch {
			out[i] = ipv4.Message{Buffers: [][]byte{make([]byte, size)}, Addr: to}
			in[i] = ipv4.Message{Buffers: [][]byte{make([]byte, 1500)}}
		}
		b.SetBytes(size)
		b.ReportAllocs()
		pending := 0
		for b.Loop() {
			if pending == 0 {
				for sent := 0; sent < batch; {
					n, err := pa.WriteBatch(out[sent:], 0)
					if err != nil {
						b.Fatal(err)
					}
					sent += n
				}
				for got := 0; got < batch; {
					n, err := pc.ReadBatch(in[got:], 0)
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
				pending = batch
			}
			pending--
		}
	})
}

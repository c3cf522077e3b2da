package transport

import (
	"fmt"
	"testing"
)

// BenchmarkUDPLoopback measures one datagram written and read back over
// IPv4 loopback, on one goroutine.
func BenchmarkUDPLoopback(b *testing.B) {
	for _, size := range []int{64, 1200} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			a := listenUDP(b, "udp4", "127.0.0.1:0", UDPConfig{})
			c := listenUDP(b, "udp4", "127.0.0.1:0", UDPConfig{})
			msg, buf := make([]byte, size), make([]byte, 1500)
			to := c.LocalAddr()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if err := a.WriteTo(msg, to); err != nil {
					b.Fatal(err)
				}
				if _, _, err := c.ReadFrom(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

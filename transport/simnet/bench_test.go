package simnet

import (
	"fmt"
	"testing"
	"time"

	"github.com/netrak/netrak/transport"
)

// BenchmarkWriteRead measures the simulator's own cost per datagram: one
// write and one read on a lossless, zero-latency link.
func BenchmarkWriteRead(b *testing.B) {
	for _, size := range []int{64, 1200} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			n := New(1)
			x, _ := n.Listen(addrA)
			y, _ := n.Listen(addrB)
			defer n.Close()
			msg, buf := make([]byte, size), make([]byte, 1500)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if err := x.WriteTo(msg, addrB); err != nil {
					b.Fatal(err)
				}
				if _, _, err := y.ReadFrom(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriteReadDelayed adds 1ms of latency, so every datagram goes
// through the delay queue and its timer. The window of datagrams in flight
// is large enough that the latency does not bound the rate: this measures
// the cost of the timer path, not the latency.
func BenchmarkWriteReadDelayed(b *testing.B) {
	const window = 4096
	n := New(1)
	x, _ := n.Listen(addrA)
	y, _ := n.Listen(addrB)
	defer n.Close()
	n.SetReceiveQueue(2 * window)
	n.SetLink(addrA, addrB, transport.Impairment{Latency: time.Millisecond})
	msg, buf := make([]byte, 1200), make([]byte, 1500)
	for range window {
		x.WriteTo(msg, addrB)
	}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := y.ReadFrom(buf); err != nil {
			b.Fatal(err)
		}
		x.WriteTo(msg, addrB)
	}
}

package simnet_test

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
)

func Example() {
	n := simnet.New(1) // same seed, same losses
	client, _ := n.Listen(netip.MustParseAddrPort("10.0.0.1:5000"))
	server, _ := n.Listen(netip.MustParseAddrPort("10.0.0.2:7000"))
	defer client.Close()
	defer server.Close()

	// Lose a quarter of the datagrams from client to server.
	n.SetLink(client.LocalAddr(), server.LocalAddr(), transport.Impairment{Loss: 0.25})
	for i := range 1000 {
		client.WriteTo([]byte{byte(i)}, server.LocalAddr())
	}

	// Without latency, delivery happens inside WriteTo: drain what arrived.
	server.SetReadDeadline(time.Now())
	received := 0
	buf := make([]byte, 64)
	for {
		if _, _, err := server.ReadFrom(buf); err != nil {
			break
		}
		received++
	}
	s := n.Stats()
	fmt.Println("received:", received)
	fmt.Println("lost:", s.DroppedLoss)
	// Output:
	// received: 756
	// lost: 244
}

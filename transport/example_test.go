package transport_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
)

// A Shaper gives the same fates for the same seed, which is what makes the
// simulator and the relay reproducible.
func ExampleShaper() {
	imp := transport.Impairment{Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.2, Duplicate: 0.2}
	var counters transport.ImpairmentCounters
	s := transport.NewShaper(imp, 3, 0, &counters)
	now := time.Now()
	for range 8 {
		f := s.Decide(now, 100)
		switch {
		case f.Drop != transport.NotDropped:
			fmt.Println("dropped:", f.Drop)
		case f.Copies == 2:
			fmt.Printf("twice, after %v and %v\n", f.Delay[0].Round(time.Millisecond), f.Delay[1].Round(time.Millisecond))
		default:
			fmt.Printf("once, after %v\n", f.Delay[0].Round(time.Millisecond))
		}
	}
	fmt.Println(counters.Snapshot().Sent, "sent")
	// Output:
	// once, after 19ms
	// once, after 23ms
	// once, after 24ms
	// dropped: loss
	// once, after 17ms
	// once, after 19ms
	// dropped: loss
	// once, after 20ms
	// 8 sent
}

func ExampleReadContext() {
	n := simnet.New(1)
	c, _ := n.Listen(netip.MustParseAddrPort("10.0.0.1:5000"))
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, _, err := transport.ReadContext(ctx, c, make([]byte, 1500))
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output: true
}

func ExampleListenUDP() {
	server, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer server.Close()
	client, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{DSCP: 46})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	client.WriteTo([]byte("ping"), server.LocalAddr())
	buf := make([]byte, 1500)
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, from, err := server.ReadFrom(buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s from the client: %v\n", buf[:n], from == client.LocalAddr())
	// Output: ping from the client: true
}

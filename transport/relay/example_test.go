package relay_test

import (
	"context"
	"fmt"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/relay"
)

func Example() {
	// A server that answers every datagram.
	server, _ := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	defer server.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := server.ReadFrom(buf)
			if err != nil {
				return
			}
			server.WriteTo(buf[:n], from)
		}
	}()

	// A relay in front of it adding 25ms each way.
	r, err := relay.New(relay.Config{
		Listen: "127.0.0.1:0",
		Target: server.LocalAddr(),
		Up:     transport.Impairment{Latency: 25 * time.Millisecond},
		Down:   transport.Impairment{Latency: 25 * time.Millisecond},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()

	client, _ := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	defer client.Close()
	start := time.Now()
	client.WriteTo([]byte("hello"), r.Addr())
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1500)
	n, _, err := client.ReadFrom(buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s after at least 50ms: %v\n", buf[:n], time.Since(start) >= 50*time.Millisecond)

	cancel()
	<-done
	s := r.Stats()
	fmt.Println("up delivered:", s.Up.Delivered, "down delivered:", s.Down.Delivered)
	// Output:
	// hello after at least 50ms: true
	// up delivered: 1 down delivered: 1
}

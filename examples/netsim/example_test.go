package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/netrak/netrak/transport"
)

// Example runs netsim in front of a UDP server, with 10ms of latency each
// way, and sends one datagram through it.
func Example() {
	server, _ := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	defer server.Close()
	client, _ := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	defer client.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan netip.AddrPort, 1)
	done := make(chan error, 1)
	args := []string{"-listen", "127.0.0.1:0", "-target", server.LocalAddr().String(), "-latency", "10ms"}
	go func() { done <- run(ctx, args, io.Discard, io.Discard, func(a netip.AddrPort) { ready <- a }) }()
	relayAddr := <-ready

	client.WriteTo([]byte("hello"), relayAddr)
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, from, err := server.ReadFrom(buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("server got %q, not from the client directly: %v\n", buf[:n], from != client.LocalAddr())
	cancel()
	fmt.Println("run:", <-done)
	// Output:
	// server got "hello", not from the client directly: true
	// run: <nil>
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport"
)

// Example runs the server with -count 3 and has one client send it three
// demo payloads and leave.
func Example() {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"-addr", "127.0.0.1:0", "-count", "3", "-timeout", "10s"}, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	lines.Scan() // "listening on 127.0.0.1:port"
	server := netip.MustParseAddrPort(strings.TrimPrefix(lines.Text(), "listening on "))

	key, _ := netcode.ParseKeyHex(testKeyHex)
	token, _ := netcode.GenerateConnectToken(&netcode.TokenParams{
		ClientID: 42, PublicAddresses: []netip.AddrPort{server},
		ProtocolID: 0x1122334455667788, PrivateKey: key,
	})
	conn, _ := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	client, err := netcode.Dial(ctx, conn, token, netcode.ClientConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		client.Send(demoPayload)
	}
	client.Close()

	for lines.Scan() {
		line, _, _ := strings.Cut(lines.Text(), ", address") // the client's port varies
		fmt.Println(line)
	}
	fmt.Println("run:", <-done)
	// Output:
	// client connected: slot 0, client id 0x2a
	// client disconnected: slot 0, client id 0x2a, reason client disconnected
	// 3 passed, 0 failed
	// run: <nil>
}

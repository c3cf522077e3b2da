package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport"
)

// Example runs the client with -count 3 against a server that sends it the
// demo payload three times.
func Example() {
	key, _ := netcode.ParseKeyHex(testKeyHex)
	conn, _ := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	server, err := netcode.ListenServer(conn, netcode.ServerConfig{ProtocolID: 0x1122334455667788, PrivateKey: key})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer server.Close()
	go func() {
		e, err := server.NextEvent(context.Background())
		if err != nil {
			return
		}
		for range 3 {
			server.Send(e.ClientIndex, demoPayload)
		}
	}()

	var out bytes.Buffer
	err = run(context.Background(), []string{"-addr", server.LocalAddr().String(), "-count", "3", "-timeout", "10s"}, &out, io.Discard)
	fmt.Print(strings.ReplaceAll(out.String(), server.LocalAddr().String(), "the server"))
	fmt.Println("run:", err)
	// Output:
	// connected to the server: slot 0 of 256
	// disconnected: client disconnected
	// 3 passed, 0 failed
	// run: <nil>
}

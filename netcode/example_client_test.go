package netcode_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport/simnet"
)

// The tick-driven API: a game loop hands the client what arrived, calls
// Update, and sends what Outgoing returns. Here a sans-I/O server stands in
// for the network, and the clock is explicit.
func ExampleClient() {
	key, _ := netcode.ParseKeyHex("606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1")
	const protocolID = 0x1122334455667788
	serverAddr := netip.MustParseAddrPort("203.0.113.5:40000")
	clientAddr := netip.MustParseAddrPort("198.51.100.7:50000")
	now := time.Unix(1_700_000_000, 0)

	server, _ := netcode.NewServer(netcode.ServerConfig{ProtocolID: protocolID, PrivateKey: key, PublicAddress: serverAddr, MaxClients: 16})
	server.Start(now)
	token, _ := netcode.GenerateConnectToken(&netcode.TokenParams{
		ClientID: 42, PublicAddresses: []netip.AddrPort{serverAddr},
		ProtocolID: protocolID, PrivateKey: key, Now: now,
	})

	client, _ := netcode.NewClient(netcode.ClientConfig{ProtocolID: protocolID})
	if err := client.Connect(token, now); err != nil {
		fmt.Println(err)
		return
	}
	// tick stands in for one frame of both game loops and the network
	// between them.
	tick := func() {
		now = now.Add(time.Second / 60)
		client.Update(now)
		for _, d := range client.Outgoing() {
			server.Receive(d.Data, clientAddr, now)
		}
		server.Update(now)
		for _, d := range server.Outgoing() {
			client.Receive(d.Data, serverAddr, now)
		}
	}
	for client.State() != netcode.ClientConnected {
		tick()
	}
	fmt.Printf("%v: slot %d of %d\n", client.State(), client.ClientIndex(), client.MaxClients())

	client.SendPayload([]byte("hello"))
	server.SendPayload(0, []byte("welcome"))
	tick()
	if p, _, ok := server.ReceivePayload(0); ok {
		fmt.Printf("server got %q\n", p)
	}
	for {
		p, seq, ok := client.ReceivePayload()
		if !ok {
			break
		}
		fmt.Printf("client got %q (sequence %d)\n", p, seq)
	}

	client.Disconnect(now)
	tick()
	for _, e := range server.Events() {
		fmt.Println(e.Kind, e.ClientIndex, e.Reason)
	}
	fmt.Println(client.State())
	// Output:
	// connected: slot 0 of 16
	// server got "hello"
	// client got "welcome" (sequence 2)
	// connected 0 none
	// disconnected 0 client disconnected
	// disconnected
}

// The blocking API: Dial returns once connected, and the ClientConn runs
// its own goroutines. Here both ends are on the simulated network.
func ExampleDial() {
	key, _ := netcode.ParseKeyHex("606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1")
	const protocolID = 0x1122334455667788
	network := simnet.New(1)
	defer network.Close()

	serverConn, _ := network.Listen(netip.MustParseAddrPort("10.0.0.1:40000"))
	server, err := netcode.ListenServer(serverConn, netcode.ServerConfig{ProtocolID: protocolID, PrivateKey: key})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer server.Close()

	// The backend's part: a token for client 42, for this server.
	token, _ := netcode.GenerateConnectToken(&netcode.TokenParams{
		ClientID: 42, PublicAddresses: []netip.AddrPort{server.LocalAddr()},
		ProtocolID: protocolID, PrivateKey: key,
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	clientConn, _ := network.Listen(netip.MustParseAddrPort("10.0.0.2:50000"))
	client, err := netcode.Dial(ctx, clientConn, token, netcode.ClientConfig{ProtocolID: protocolID})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("connected to", client.RemoteAddr(), "in slot", client.ClientIndex())

	client.Send([]byte("ping"))
	m, _ := server.Receive(ctx)
	fmt.Printf("server got %q from client %d\n", m.Payload, m.ClientID)
	server.Send(m.ClientIndex, []byte("pong"))
	reply, _ := client.Receive(ctx)
	fmt.Printf("client got %q\n", reply.Payload)

	client.Close() // sends the disconnect packets
	for {
		e, _ := server.NextEvent(ctx)
		if e.Kind == netcode.EventDisconnected {
			fmt.Println("server:", e.Reason)
			break
		}
	}
	// Output:
	// connected to 10.0.0.1:40000 in slot 0
	// server got "ping" from client 42
	// client got "pong"
	// server: client disconnected
}

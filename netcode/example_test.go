package netcode_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport/simnet"
)

// A backend generates a connect token for an authenticated client; the
// client reads the public part to learn where to connect.
func ExampleGenerateConnectToken() {
	privateKey, _ := netcode.ParseKeyHex("606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1")
	token, err := netcode.GenerateConnectToken(&netcode.TokenParams{
		ClientID:        42,
		PublicAddresses: []netip.AddrPort{netip.MustParseAddrPort("203.0.113.5:40000")},
		Expiry:          30 * time.Second,
		Timeout:         5 * time.Second,
		ProtocolID:      0x1122334455667788,
		PrivateKey:      privateKey,
		Now:             time.Unix(1_700_000_000, 0),
		// Fixed randomness makes the output reproducible; leave Rand nil
		// in production to use crypto/rand.
		Rand: bytes.NewReader(make([]byte, 2*netcode.KeyBytes+netcode.ConnectTokenNonceBytes)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rest := netcode.EncodeTokenBase64(token) // handed to the client over HTTPS

	raw, _ := netcode.DecodeTokenBase64(rest)
	var tok netcode.ConnectToken
	if _, err := netcode.ParseConnectToken(raw, &tok); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(raw), "bytes")
	fmt.Printf("protocol %#x, valid %d s, timeout %d s\n", tok.ProtocolID, tok.ExpireTimestamp-tok.CreateTimestamp, tok.TimeoutSeconds)
	fmt.Println("servers:", tok.ServerAddresses)
	// Output:
	// 2048 bytes
	// protocol 0x1122334455667788, valid 30 s, timeout 5 s
	// servers: [203.0.113.5:40000]
}

// exampleClient is the client side of a handshake written out with the
// wire API, so the server examples need nothing else.
type exampleClient struct {
	tok        netcode.ConnectToken
	toServer   *netcode.PacketCipher
	fromServer *netcode.PacketCipher
	replay     netcode.ReplayProtection
	seq        uint64
}

func newExampleClient(raw []byte) *exampleClient {
	c := &exampleClient{}
	if _, err := netcode.ParseConnectToken(raw, &c.tok); err != nil {
		panic(err)
	}
	c.toServer = netcode.NewPacketCipher(c.tok.ClientToServerKey, c.tok.ProtocolID)
	c.fromServer = netcode.NewPacketCipher(c.tok.ServerToClientKey, c.tok.ProtocolID)
	return c
}

func (c *exampleClient) request() []byte {
	r := netcode.RequestPacket{
		ProtocolID:      c.tok.ProtocolID,
		ExpireTimestamp: c.tok.ExpireTimestamp,
		TokenNonce:      c.tok.Nonce,
		TokenData:       c.tok.PrivateData,
	}
	b, err := r.Append(nil)
	if err != nil {
		panic(err)
	}
	return b
}

func (c *exampleClient) seal(p netcode.Packet) []byte {
	p.Sequence = c.seq
	c.seq++
	b, err := p.Append(nil, c.toServer)
	if err != nil {
		panic(err)
	}
	return b
}

func (c *exampleClient) response(challenge *netcode.Packet) []byte {
	return c.seal(netcode.Packet{
		Type:              netcode.ConnectionResponse,
		ChallengeSequence: challenge.ChallengeSequence,
		ChallengeToken:    challenge.ChallengeToken,
	})
}

func (c *exampleClient) read(b []byte) (netcode.Packet, bool) {
	var p netcode.Packet
	_, err := netcode.ParsePacket(b, c.fromServer, netcode.ClientReceives, &c.replay, &p)
	return p, err == nil
}

// The tick-driven server: the game loop hands it datagrams with Receive,
// calls Update each tick, sends what Outgoing returns, and drains events
// and payloads.
func ExampleServer() {
	key := netcode.Key{1, 2, 3}
	public := netip.MustParseAddrPort("203.0.113.5:40000")
	clientAddr := netip.MustParseAddrPort("198.51.100.7:5000")
	now := time.Unix(1_700_000_000, 0)

	srv, err := netcode.NewServer(netcode.ServerConfig{ProtocolID: 0x1122334455667788, PrivateKey: key, PublicAddress: public})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.Start(now)

	token, _ := netcode.GenerateConnectToken(&netcode.TokenParams{
		ClientID: 7, PublicAddresses: []netip.AddrPort{public},
		ProtocolID: 0x1122334455667788, PrivateKey: key, Now: now,
	})
	client := newExampleClient(token)
	// exchange plays the network: one datagram in, the replies out.
	exchange := func(pkt []byte) []netcode.Packet {
		srv.Receive(pkt, clientAddr, now)
		var replies []netcode.Packet
		for _, d := range srv.Outgoing() {
			if p, ok := client.read(d.Data); ok {
				replies = append(replies, p)
			}
		}
		return replies
	}

	challenge := exchange(client.request())[0]
	keepAlive := exchange(client.response(&challenge))[0]
	fmt.Println("client learns slot", keepAlive.ClientIndex, "of", keepAlive.MaxClients)
	exchange(client.seal(netcode.Packet{Type: netcode.ConnectionPayload, Payload: []byte("jump")}))

	// One tick of the game loop.
	now = now.Add(time.Second / 60)
	srv.Update(now)
	for _, e := range srv.Events() {
		fmt.Println(e.Kind, "slot", e.ClientIndex, "client", e.ClientID)
	}
	for i := range srv.MaxClients() {
		for p, seq, ok := srv.ReceivePayload(i); ok; p, seq, ok = srv.ReceivePayload(i) {
			fmt.Printf("slot %d sent %q (sequence %d)\n", i, p, seq)
			srv.SendPayload(i, []byte("ok"))
		}
	}
	for _, d := range srv.Outgoing() {
		if p, ok := client.read(d.Data); ok && p.Type == netcode.ConnectionPayload {
			fmt.Printf("client receives %q\n", p.Payload)
		}
	}
	// Output:
	// client learns slot 0 of 256
	// connected slot 0 client 7
	// slot 0 sent "jump" (sequence 1)
	// client receives "ok"
}

// The blocking server for services: ListenServer runs the server on a
// transport (here the in-memory network) with its own goroutines.
func ExampleListenServer() {
	network := simnet.New(1)
	defer network.Close()
	public := netip.MustParseAddrPort("10.0.0.1:40000")
	key := netcode.GenerateKey()
	conn, _ := network.Listen(public)
	srv, err := netcode.ListenServer(conn, netcode.ServerConfig{ProtocolID: 42, PrivateKey: key})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	token, _ := netcode.GenerateConnectToken(&netcode.TokenParams{
		ClientID: 7, PublicAddresses: []netip.AddrPort{public}, ProtocolID: 42, PrivateKey: key,
	})
	client := newExampleClient(token)
	cconn, _ := network.Listen(netip.MustParseAddrPort("10.0.0.2:5000"))
	defer cconn.Close()
	buf := make([]byte, 2048)
	await := func(want netcode.PacketType) netcode.Packet {
		for {
			n, _, err := cconn.ReadFrom(buf)
			if err != nil {
				panic(err)
			}
			if p, ok := client.read(buf[:n]); ok && p.Type == want {
				return p
			}
		}
	}
	cconn.WriteTo(client.request(), public)
	challenge := await(netcode.ConnectionChallenge)
	cconn.WriteTo(client.response(&challenge), public)
	await(netcode.ConnectionKeepAlive)
	cconn.WriteTo(client.seal(netcode.Packet{Type: netcode.ConnectionPayload, Payload: []byte("hello")}), public)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, _ := srv.NextEvent(ctx)
	fmt.Println(ev.Kind, "client", ev.ClientID)
	msg, err := srv.Receive(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("client %d: %s\n", msg.ClientID, msg.Payload)
	srv.Send(msg.ClientIndex, []byte("welcome"))
	fmt.Printf("reply: %s\n", await(netcode.ConnectionPayload).Payload)
	// Output:
	// connected client 7
	// client 7: hello
	// reply: welcome
}

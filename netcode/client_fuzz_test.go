package netcode

import (
	"bytes"
	"net/netip"
	"testing"
	"time"
)

// fuzzToken is a connect token with fixed keys, so seeds sealed with its
// server-to-client key stay valid across runs.
func fuzzToken(tb testing.TB) (raw []byte, tok ConnectToken) {
	rnd := make([]byte, 2*KeyBytes+ConnectTokenNonceBytes)
	for i := range rnd {
		rnd[i] = byte(i)
	}
	raw, err := GenerateConnectToken(&TokenParams{ClientID: 1, PublicAddresses: []netip.AddrPort{testServerAddr},
		ProtocolID: testProtocolID, PrivateKey: testServerKey, Now: testEpoch, Rand: bytes.NewReader(rnd)})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := ParseConnectToken(raw, &tok); err != nil {
		tb.Fatal(err)
	}
	return raw, tok
}

// FuzzClientReceive feeds arbitrary datagrams from the server's address to
// a client in each of its three active states. The client must not panic,
// may only make the transitions the standard allows, and must deliver
// payloads only when connected.
func FuzzClientReceive(f *testing.F) {
	raw, tok := fuzzToken(f)
	s2c := NewPacketCipher(tok.ServerToClientKey, testProtocolID)
	seal := func(p Packet) []byte {
		b, err := p.Append(nil, s2c)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	seeds := [][]byte{
		seal(Packet{Type: ConnectionDenied, Sequence: 1 << 63}),
		seal(Packet{Type: ConnectionChallenge, Sequence: 1<<63 + 1, ChallengeSequence: 3}),
		seal(Packet{Type: ConnectionKeepAlive, Sequence: 1, ClientIndex: 5, MaxClients: 8}),
		seal(Packet{Type: ConnectionPayload, Sequence: 2, Payload: []byte("payload")}),
		seal(Packet{Type: ConnectionDisconnect, Sequence: 3}),
		mustAppend(f, &RequestPacket{}),
	}
	for _, p := range loadVectors(f).Packets {
		seeds = append(seeds, []byte(p.Bytes))
	}
	for _, s := range seeds {
		for state := range uint8(3) {
			f.Add(s, state)
		}
	}
	challenge := seal(Packet{Type: ConnectionChallenge, Sequence: 1 << 63})
	keepAlive := seal(Packet{Type: ConnectionKeepAlive, Sequence: 0, MaxClients: 8})

	f.Fuzz(func(t *testing.T, pkt []byte, state uint8) {
		c, _ := NewClient(ClientConfig{ReceiveQueueSize: 4})
		now := testEpoch
		if err := c.Connect(raw, now); err != nil {
			t.Fatal(err)
		}
		if state%3 >= 1 {
			c.Receive(bytes.Clone(challenge), testServerAddr, now)
		}
		if state%3 == 2 {
			c.Receive(bytes.Clone(keepAlive), testServerAddr, now)
		}
		before := c.State()
		c.Outgoing()
		c.Receive(bytes.Clone(pkt), testServerAddr, now)
		after := c.State()
		allowed := map[ClientState][]ClientState{
			ClientSendingConnectionRequest:  {ClientSendingConnectionRequest, ClientSendingConnectionResponse, ClientConnectionDenied},
			ClientSendingConnectionResponse: {ClientSendingConnectionResponse, ClientConnected, ClientConnectionDenied},
			ClientConnected:                 {ClientConnected, ClientDisconnected},
		}
		ok := false
		for _, s := range allowed[before] {
			ok = ok || s == after
		}
		if !ok {
			t.Fatalf("%v -> %v", before, after)
		}
		if _, _, got := c.ReceivePayload(); got && before != ClientConnected {
			t.Fatalf("payload delivered in state %v", before)
		}
		for _, d := range c.Outgoing() {
			if len(d.Data) > MaxPacketBytes || d.Addr != testServerAddr {
				t.Fatalf("sent %d bytes to %v", len(d.Data), d.Addr)
			}
		}
		c.Update(now.Add(time.Second))
	})
}

package session

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport/simnet"
)

// The fuzz targets put a session Listener (or a Dial'd client) on the
// simulated network opposite a sans-I/O netcode core that the fuzzer
// controls, so that besides raw datagrams it can send payload packets
// that are well encrypted and authentic and carry arbitrary bytes where
// the session expects a RakNet datagram.

var (
	fuzzServer = netip.MustParseAddrPort("10.0.0.1:40000")
	fuzzPeer   = netip.MustParseAddrPort("10.0.0.2:5000")
	fuzzOther  = netip.MustParseAddrPort("10.0.0.3:5000")
)

// fuzzSeeds adds RakNet datagrams a real engine sends: data with a
// split message, an ACK and a NAK, behind each of the modes.
func fuzzSeeds(f *testing.F) {
	a, _ := reliability.New(reliability.Config{MTU: EngineMTU})
	b, _ := reliability.New(reliability.Config{MTU: EngineMTU})
	now := time.Unix(1, 0)
	a.Send(make([]byte, 3000), reliability.ReliableOrdered, 1, reliability.Medium, now)
	a.Send([]byte{1, 2, 3}, reliability.UnreliableSequenced, 2, reliability.High, now)
	var input []byte
	for i := 0; ; i++ {
		d, ok := a.AppendDatagram(nil, now)
		if !ok {
			break
		}
		if i != 1 { // lose one, so b NAKs it
			b.Receive(d, now)
		}
		input = appendChunk(input, 2, d)
	}
	now = now.Add(time.Second)
	for {
		d, ok := b.AppendDatagram(nil, now)
		if !ok {
			break
		}
		input = appendChunk(input, 2, d)
		f.Add(appendChunk(nil, 2, d))
	}
	f.Add(input)
	f.Add(appendChunk(appendChunk(nil, 0, []byte{0x84, 0, 0, 0}), 1, []byte{0xc0, 0, 1, 1, 0, 0, 0}))
}

// appendChunk frames one fuzz step: a mode byte, a length byte, bytes.
func appendChunk(b []byte, mode byte, d []byte) []byte {
	d = d[:min(len(d), 255)]
	b = append(b, mode, byte(len(d)))
	return append(b, d...)
}

// chunks splits fuzz input into steps.
func chunks(in []byte, step func(mode byte, d []byte)) {
	for len(in) >= 2 {
		mode, n := in[0]%3, min(int(in[1]), len(in)-2)
		step(mode, in[2:2+n])
		in = in[2+n:]
	}
}

// pump moves datagrams between a simnet endpoint and a netcode core
// until done reports true or a second of fake time passes.
func pump(ep *simnet.Conn, receive func([]byte, netip.AddrPort, time.Time), update func(time.Time), flush func(), done func() bool) {
	buf := make([]byte, 2048)
	for end := time.Now().Add(time.Second); !done() && time.Now().Before(end); {
		flush()
		ep.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		n, from, err := ep.ReadFrom(buf)
		if err == nil {
			receive(buf[:n], from, time.Now())
		}
		update(time.Now())
	}
	flush()
}

func FuzzServer(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		synctest.Test(t, func(t *testing.T) {
			net := simnet.New(1)
			defer net.Close()
			sc, _ := net.Listen(fuzzServer)
			l, err := Listen(sc, ServerConfig{
				Netcode:    netcode.ServerConfig{ProtocolID: testProtocolID, PrivateKey: testKey},
				ConnConfig: ConnConfig{ReceiveBuffer: 1 << 16, Reliability: reliability.Config{MaxReceiveBytes: 1 << 16}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			tok, _ := netcode.GenerateConnectToken(&netcode.TokenParams{
				ClientID: 7, ProtocolID: testProtocolID, PrivateKey: testKey,
				PublicAddresses: []netip.AddrPort{fuzzServer},
			})
			peer, _ := netcode.NewClient(netcode.ClientConfig{})
			peer.Connect(tok, time.Now())
			ep, _ := net.Listen(fuzzPeer)
			other, _ := net.Listen(fuzzOther)
			flush := func() {
				for _, d := range peer.Outgoing() {
					ep.WriteTo(d.Data, d.Addr)
				}
			}
			pump(ep, peer.Receive, peer.Update, flush, func() bool { return peer.State() == netcode.ClientConnected })
			if peer.State() != netcode.ClientConnected {
				t.Fatalf("peer did not connect: %v", peer.State())
			}
			s, err := l.AcceptConn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				buf := make([]byte, 1<<16)
				for {
					if _, err := s.ReadMessageInto(buf); err != nil {
						return
					}
				}
			}()
			chunks(in, func(mode byte, d []byte) {
				switch {
				case mode == 0:
					ep.WriteTo(d, fuzzServer)
				case mode == 1:
					other.WriteTo(d, fuzzServer)
				case len(d) > 0:
					peer.SendPayload(d)
					flush()
				}
				synctest.Wait()
				st := s.Stats().Reliability
				if st.ReceiveQueueBytes > 1<<16+reliability.DefaultMaxMessageSize {
					t.Fatalf("receive queue grew to %d", st.ReceiveQueueBytes)
				}
			})
			// The server still serves: a new client connects and talks.
			if n := l.ConnectedClients(); n > 1 {
				t.Fatalf("%d clients", n)
			}
		})
	})
}

func FuzzClient(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		synctest.Test(t, func(t *testing.T) {
			net := simnet.New(1)
			defer net.Close()
			srv, _ := netcode.NewServer(netcode.ServerConfig{ProtocolID: testProtocolID, PrivateKey: testKey, PublicAddress: fuzzServer})
			srv.Start(time.Now())
			ep, _ := net.Listen(fuzzServer)
			other, _ := net.Listen(fuzzOther)
			tok, _ := netcode.GenerateConnectToken(&netcode.TokenParams{
				ClientID: 7, ProtocolID: testProtocolID, PrivateKey: testKey,
				PublicAddresses: []netip.AddrPort{fuzzServer},
			})
			cc, _ := net.Listen(fuzzPeer)
			dialed := make(chan *Conn, 1)
			go func() {
				c, err := Dial(context.Background(), tok, ClientConfig{
					Conn:       cc,
					ConnConfig: ConnConfig{ReceiveBuffer: 1 << 16, Reliability: reliability.Config{MaxReceiveBytes: 1 << 16}},
				})
				if err != nil {
					t.Error(err)
				}
				dialed <- c
			}()
			flush := func() {
				for _, d := range srv.Outgoing() {
					ep.WriteTo(d.Data, d.Addr)
				}
			}
			var c *Conn
			pump(ep, srv.Receive, srv.Update, flush, func() bool {
				select {
				case c = <-dialed:
					return true
				default:
					return false
				}
			})
			if c == nil {
				t.Fatal("client did not connect")
			}
			defer c.Close()
			go func() {
				buf := make([]byte, 1<<16)
				for {
					if _, err := c.ReadMessageInto(buf); err != nil {
						return
					}
				}
			}()
			chunks(in, func(mode byte, d []byte) {
				switch {
				case mode == 0:
					ep.WriteTo(d, fuzzPeer)
				case mode == 1:
					other.WriteTo(d, fuzzPeer)
				case len(d) > 0:
					srv.SendPayload(0, d)
					flush()
				}
				synctest.Wait()
				st := c.Stats().Reliability
				if st.ReceiveQueueBytes > 1<<16+reliability.DefaultMaxMessageSize {
					t.Fatalf("receive queue grew to %d", st.ReceiveQueueBytes)
				}
			})
		})
	})
}

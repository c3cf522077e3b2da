package session_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/session"
)

// A server and a client on loopback UDP: the backend's key mints a
// connect token, the client dials with it, and a message on an ordered
// channel comes back.
func Example() {
	key := netcode.Key{1, 2, 3} // shared by the backend and the servers
	const protocolID = 0x1122334455667788

	l, err := session.ListenUDP("udp4", "127.0.0.1:0", session.ServerConfig{
		Netcode: netcode.ServerConfig{ProtocolID: protocolID, PrivateKey: key},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	go func() {
		c, err := l.AcceptConn(context.Background())
		if err != nil {
			return
		}
		m, err := c.ReadMessage()
		if err == nil {
			c.WriteMessage(m.Data, m.Reliability, m.Channel, reliability.Medium)
		}
		c.Close()
	}()

	// What a web backend does for an authenticated player.
	token, err := netcode.GenerateConnectToken(&netcode.TokenParams{
		ClientID:        42,
		PublicAddresses: []netip.AddrPort{l.AddrPort()},
		ProtocolID:      protocolID,
		PrivateKey:      key,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := session.Dial(ctx, token, session.ClientConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	c.WriteMessage([]byte("hello"), reliability.ReliableOrdered, 2, reliability.Medium)
	m, err := c.ReadMessage()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s on channel %d, %v\n", m.Data, m.Channel, m.Reliability)
	// Output: hello on channel 2, RELIABLE_ORDERED
}

package session

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/nettest"

	"github.com/netrak/netrak/netcode"
)

// TestNettestConn runs golang.org/x/net/nettest's net.Conn conformance
// suite on a session connection over loopback UDP.
func TestNettestConn(t *testing.T) {
	var id uint64
	nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
		// The default close timeout: BasicIO closes right after writing
		// 1 MiB, and on a loaded machine a short one can give up before
		// the peer has acknowledged it all (raknet's did).
		var cc ConnConfig
		l, err := ListenUDP("udp4", "127.0.0.1:0", ServerConfig{
			Netcode:    netcode.ServerConfig{ProtocolID: testProtocolID, PrivateKey: testKey},
			ConnConfig: cc,
		})
		if err != nil {
			return nil, nil, nil, err
		}
		accepted := make(chan *Conn, 1)
		go func() {
			c, err := l.AcceptConn(context.Background())
			if err == nil {
				accepted <- c
			}
			close(accepted)
		}()
		id++
		tok, err := netcode.GenerateConnectToken(&netcode.TokenParams{
			ClientID: id, ProtocolID: testProtocolID, PrivateKey: testKey,
			PublicAddresses: []netip.AddrPort{l.AddrPort()},
		})
		if err != nil {
			l.Close()
			return nil, nil, nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		dc, err := Dial(ctx, tok, ClientConfig{ConnConfig: cc})
		if err != nil {
			l.Close()
			return nil, nil, nil, err
		}
		sc, ok := <-accepted
		if !ok {
			dc.Close()
			l.Close()
			return nil, nil, nil, net.ErrClosed
		}
		stop = func() {
			dc.Close()
			sc.Close()
			l.Close()
		}
		return dc, sc, stop, nil
	})
}

package raknet

import (
	"context"
	"net"
	"testing"
	"time"

	"golang.org/x/net/nettest"
)

// TestNettestConn runs golang.org/x/net/nettest's net.Conn conformance
// suite on a connection dialed to our Listener over loopback UDP.
func TestNettestConn(t *testing.T) {
	nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
		// The default close timeout: BasicIO closes right after writing
		// 1 MiB, and on a loaded machine a short one gave up before the
		// peer had acknowledged it all, which the peer then read as a lost
		// connection. One subtest leaves a peer that stops reading and
		// waits the timeout out; that costs 3 s once.
		l, err := Listen("udp4", "127.0.0.1:0", ListenConfig{})
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
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var d DialConfig
		dc, err := d.DialContext(ctx, "udp", l.Addr().String())
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

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
		// A short close timeout: some subtests leave a peer that no longer
		// reads, and Close would otherwise wait the default 3 s for it.
		l, err := Listen("udp4", "127.0.0.1:0", ListenConfig{ConnConfig: ConnConfig{CloseTimeout: 300 * time.Millisecond}})
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
		d := DialConfig{ConnConfig: ConnConfig{CloseTimeout: 300 * time.Millisecond}}
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

package netcode

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport/simnet"
)

// TestServerConnKeepAliveTiming: with no tick, a ServerConn sends a newly
// connected client's keep-alives exactly KeepAliveInterval apart, the
// first one KeepAliveInterval after the keep-alive that connected it.
func TestServerConnKeepAliveTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := simnet.New(45)
		defer n.Close()
		conn, err := n.Listen(testServerAddr)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ListenServer(conn, ServerConfig{ProtocolID: testProtocolID, PrivateKey: testServerKey})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// Long enough idle that the server's loop sleeps without a
		// deadline before the client comes.
		time.Sleep(3 * time.Second)
		h := &serverHarness{t: t, now: time.Now(), nextID: 1000}
		c := newSimClient(t, n, h, "198.51.100.7:5000")
		c.handshake()
		at := []time.Time{time.Now()}
		for range 5 {
			c.await(ConnectionKeepAlive)
			at = append(at, time.Now())
		}
		for i := 1; i < len(at); i++ {
			if gap := at[i].Sub(at[i-1]); gap != KeepAliveInterval {
				t.Fatalf("keep-alive %d came %v after the one before, want %v", i, gap, KeepAliveInterval)
			}
		}
	})
}

// TestClientConnRequestTiming: the same for a connecting ClientConn's
// connection requests, the first sent by Dial itself.
func TestClientConnRequestTiming(t *testing.T) {
	scenario(t, 46, func(t *testing.T, w *world) {
		server := w.listen(scServer) // never answers
		ctx, cancel := context.WithCancel(context.Background())
		dialed := make(chan error)
		start := time.Now()
		go func() {
			_, err := Dial(ctx, w.listen(scClient), w.token(nil, scServer), ClientConfig{})
			dialed <- err
		}()
		buf := make([]byte, MaxPacketBytes)
		for i := range 5 {
			if _, _, err := server.ReadFrom(buf); err != nil {
				t.Fatal(err)
			}
			if got, want := time.Since(start), time.Duration(i)*KeepAliveInterval; got != want {
				t.Fatalf("request %d sent %v after Dial, want %v", i, got, want)
			}
		}
		cancel()
		if err := <-dialed; !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial = %v", err)
		}
	})
}

package session

import (
	"testing"
	"time"

	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
)

// TestNoKeepAlivesWhileTrafficFlows: while the client streams data and
// the server only acknowledges it, neither side sends a netcode
// keep-alive, since every RakNet datagram (ACKs too) is a payload packet.
// Once both go quiet, keep-alives resume at 10 Hz and hold the connection
// open past the token's timeout.
func TestNoKeepAlivesWhileTrafficFlows(t *testing.T) {
	scenario(t, 11, func(t *testing.T, w *world) {
		w.net.SetDefault(transport.Impairment{Latency: 10 * time.Millisecond})
		l := w.server(srvAddr, nil)
		c := w.mustDial("10.0.0.2:5000", w.token(nil, srvAddr))
		s := accept(t, l, time.Second)
		time.Sleep(time.Second) // let the handshake's keep-alives settle
		before := [2]Stats{c.Stats(), s.Stats()}
		go func() {
			buf := make([]byte, 64)
			for {
				if _, err := s.ReadMessageInto(buf); err != nil {
					return
				}
			}
		}()
		for range 100 { // 2 s of a message every 20 ms
			if _, err := c.WriteMessage([]byte("tick"), reliability.ReliableOrdered, 0, reliability.Medium); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		after := [2]Stats{c.Stats(), s.Stats()}
		for i, side := range []string{"client", "server"} {
			if n := after[i].KeepAlivesSent - before[i].KeepAlivesSent; n != 0 {
				t.Errorf("%s sent %d keep-alives while traffic flowed", side, n)
			}
			if after[i].PayloadsSent-before[i].PayloadsSent < 50 {
				t.Errorf("%s sent only %d payloads", side, after[i].PayloadsSent-before[i].PayloadsSent)
			}
		}
		// Quiet for three token timeouts: keep-alives carry the connection.
		time.Sleep(15 * time.Second)
		quiet := c.Stats()
		if n := quiet.KeepAlivesSent - after[0].KeepAlivesSent; n < 140 || n > 151 {
			t.Errorf("client sent %d keep-alives in 15 quiet seconds, want about 150", n)
		}
		if c.Err() != nil || s.Err() != nil {
			t.Fatalf("connection ended while idle: %v, %v", c.Err(), s.Err())
		}
	})
}

package raknet

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
)

// Ping on the simulated network, under a fake clock: every scenario is
// deterministic and takes no real time.

var (
	simClient = netip.MustParseAddrPort("10.0.0.1:50000")
	simServer = netip.MustParseAddrPort("10.0.0.2:19132")
)

// countingResponder answers pings like serveResponder and counts them.
type countingResponder struct {
	mu    sync.Mutex
	pings int
}

func (c *countingResponder) serve(conn transport.Conn, r *PongResponse) {
	buf := make([]byte, 2048)
	for {
		n, from, err := conn.ReadFrom(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		out, err := AnswerPing(nil, buf[:n], r)
		if err != nil {
			continue
		}
		c.mu.Lock()
		c.pings++
		c.mu.Unlock()
		conn.WriteTo(out, from)
	}
}

func simSetup(t *testing.T, seed uint64) (*simnet.Network, *simnet.Conn, *countingResponder) {
	t.Helper()
	n := simnet.New(seed)
	server, err := n.Listen(simServer)
	if err != nil {
		t.Fatal(err)
	}
	client, err := n.Listen(simClient)
	if err != nil {
		t.Fatal(err)
	}
	resp := &countingResponder{}
	go resp.serve(server, &PongResponse{ServerGUID: 0x5eed, Data: []byte("MCPE;sim;11;1.0;0;1;0;sim;Survival;1;19132;19133;")})
	t.Cleanup(func() {
		client.Close()
		server.Close()
		n.Close()
	})
	return n, client, resp
}

func TestPingSimulatedLossRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, client, resp := simSetup(t, 1)
		latency := transport.Impairment{Latency: 20 * time.Millisecond}
		n.SetDefault(latency)
		// The path to the server is down for the first 2.5 s: the pings
		// sent at 0 s, 1 s and 2 s are lost, the one at 3 s gets through.
		n.SetLink(simClient, simServer, transport.Impairment{Latency: 20 * time.Millisecond, Loss: 1})
		go func() {
			time.Sleep(2500 * time.Millisecond)
			n.SetLink(simClient, simServer, latency)
		}()

		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := PingConfig{Conn: client, GUID: 1}
		res, err := c.Ping(ctx, simServer)
		if err != nil {
			t.Fatal(err)
		}
		if res.GUID != 0x5eed || res.RTT != 40*time.Millisecond {
			t.Fatalf("result %+v, want GUID 0x5eed and RTT 40ms", res)
		}
		if took := time.Since(start); took != 3*time.Second+40*time.Millisecond {
			t.Fatalf("Ping took %v, want 3.04s (three lost pings, one second apart)", took)
		}
		if s := n.Stats(); s.DroppedLoss != 3 {
			t.Fatalf("network dropped %d datagrams, want the 3 pings", s.DroppedLoss)
		}
		resp.mu.Lock()
		defer resp.mu.Unlock()
		if resp.pings != 1 {
			t.Fatalf("server answered %d pings, want 1", resp.pings)
		}
	})
}

func TestPingSimulatedRandomLoss(t *testing.T) {
	// Half the datagrams in each direction are lost. For every seed the
	// ping must eventually succeed, and the RTT must be that of the ping
	// that was answered, not of the first one sent.
	var lost, retried uint64
	for seed := uint64(1); seed <= 20; seed++ {
		synctest.Test(t, func(t *testing.T) {
			n, client, _ := simSetup(t, seed)
			n.SetDefault(transport.Impairment{Latency: 30 * time.Millisecond, Loss: 0.5})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := PingConfig{Conn: client, Interval: 200 * time.Millisecond}
			res, err := c.Ping(ctx, simServer)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if res.RTT != 60*time.Millisecond {
				t.Fatalf("seed %d: RTT %v, want 60ms", seed, res.RTT)
			}
			s := n.Stats()
			lost += s.DroppedLoss
			if s.DroppedLoss > 0 {
				retried++
			}
		})
	}
	// The scenario must really have exercised resends.
	if lost == 0 || retried < 5 {
		t.Fatalf("only %d datagrams lost, %d of 20 pings needed a resend", lost, retried)
	}
}

func TestPingSimulatedLatePong(t *testing.T) {
	// The first pong arrives after the ping has been resent: it is still
	// accepted, and its RTT is measured from the ping it answers.
	synctest.Test(t, func(t *testing.T) {
		n, client, _ := simSetup(t, 2)
		n.SetDefault(transport.Impairment{Latency: 700 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := PingConfig{Conn: client}
		res, err := c.Ping(ctx, simServer)
		if err != nil {
			t.Fatal(err)
		}
		if res.RTT != 1400*time.Millisecond {
			t.Fatalf("RTT %v, want 1.4s", res.RTT)
		}
	})
}

func TestPingSimulatedTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, client, resp := simSetup(t, 3)
		n.SetDefault(transport.Impairment{Loss: 1})
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c := PingConfig{Conn: client}
		_, err := c.Ping(ctx, simServer)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
		if took := time.Since(start); took != 5*time.Second {
			t.Fatalf("gave up after %v, want 5s", took)
		}
		if s := n.Stats(); s.DroppedLoss != 5 {
			t.Fatalf("%d pings sent and lost, want 5 (one a second)", s.DroppedLoss)
		}
		resp.mu.Lock()
		defer resp.mu.Unlock()
		if resp.pings != 0 {
			t.Fatalf("server saw %d pings", resp.pings)
		}
	})
}

func TestPingSimulatedIgnoresNoise(t *testing.T) {
	// A third host floods the client with pongs and junk; Ping ignores them
	// and returns the real server's answer.
	synctest.Test(t, func(t *testing.T) {
		n, client, _ := simSetup(t, 4)
		n.SetDefault(transport.Impairment{Latency: 10 * time.Millisecond})
		noisy, err := n.Listen(netip.MustParseAddrPort("10.0.0.9:19132"))
		if err != nil {
			t.Fatal(err)
		}
		defer noisy.Close()
		fake := UnconnectedPong{ServerGUID: 666, Data: []byte("fake")}
		fb, _ := fake.Append(nil)
		noisy.WriteTo(fb, simClient)
		noisy.WriteTo([]byte{0x84, 0, 0, 0}, simClient)
		noisy.WriteTo(nil, simClient)

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c := PingConfig{Conn: client}
		res, err := c.Ping(ctx, simServer)
		if err != nil {
			t.Fatal(err)
		}
		if res.GUID != 0x5eed {
			t.Fatalf("GUID %#x, want the real server's", res.GUID)
		}
	})
}

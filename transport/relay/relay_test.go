package relay

import (
	"context"
	"errors"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/transporttest"
)

func listenUDP(t *testing.T) *transport.UDPConn {
	t.Helper()
	c, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startRelay runs a relay in front of target until the test ends.
func startRelay(t *testing.T, cfg Config) *Relay {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return r
}

// echo answers every datagram to s with the same bytes, until s closes.
func echo(s *transport.UDPConn) {
	buf := make([]byte, 2048)
	for {
		n, from, err := s.ReadFrom(buf)
		if err != nil {
			return
		}
		s.WriteTo(buf[:n], from)
	}
}

func read(t *testing.T, c *transport.UDPConn, buf []byte, timeout time.Duration) (int, netip.AddrPort, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(timeout))
	defer c.SetReadDeadline(time.Time{})
	return c.ReadFrom(buf)
}

func TestRelayAppliesLoss(t *testing.T) {
	const total, loss = 3000, 0.3
	server := listenUDP(t)
	r := startRelay(t, Config{Target: server.LocalAddr(), Up: transport.Impairment{Loss: loss}, Seed: 1})
	client := listenUDP(t)

	p := transporttest.ProbeLoss(t, client, server, r.Addr(), total)
	rate := p.LossRate()
	tol := 5 * math.Sqrt(loss*(1-loss)/total)
	if math.Abs(rate-loss) > tol {
		t.Errorf("loss rate %.4f, want %.2f ± %.4f", rate, loss, tol)
	}
	s := r.Stats()
	t.Logf("loss rate %.4f; probe %+v; stats:\n%v", rate, p, s)
	// Markers still in flight when the probe ends may be dropped later.
	lost := uint64(p.Sent - p.Received)
	if markersLost := uint64(p.MarkersSent - p.MarkersReceived); s.Up.DroppedLoss < lost || s.Up.DroppedLoss > lost+markersLost {
		t.Errorf("DroppedLoss = %d, want %d data datagrams plus up to %d markers", s.Up.DroppedLoss, lost, markersLost)
	}
}

func TestRelayAppliesLatency(t *testing.T) {
	const up, down = 30 * time.Millisecond, 20 * time.Millisecond
	server := listenUDP(t)
	go echo(server)
	r := startRelay(t, Config{
		Target: server.LocalAddr(),
		Up:     transport.Impairment{Latency: up},
		Down:   transport.Impairment{Latency: down},
	})
	client := listenUDP(t)
	buf := make([]byte, 64)
	for i := range 20 {
		sent := time.Now()
		client.WriteTo([]byte{byte(i)}, r.Addr())
		n, from, err := read(t, client, buf, 10*time.Second)
		if err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
		rtt := time.Since(sent)
		if n != 1 || buf[0] != byte(i) || from != r.Addr() {
			t.Fatalf("ping %d: got %v from %v", i, buf[:n], from)
		}
		if rtt < up+down {
			t.Fatalf("ping %d: round trip %v, want at least %v", i, rtt, up+down)
		}
	}
	if s := r.Stats(); s.Up.Delayed != 20 || s.Down.Delayed != 20 {
		t.Errorf("Delayed up=%d down=%d, want 20 each", s.Up.Delayed, s.Down.Delayed)
	}
}

func TestRelayDuplicatesAndMTU(t *testing.T) {
	server := listenUDP(t)
	r := startRelay(t, Config{Target: server.LocalAddr(), Up: transport.Impairment{Duplicate: 1, MTU: 100}})
	client := listenUDP(t)
	client.WriteTo(make([]byte, 101), r.Addr()) // over the MTU
	client.WriteTo([]byte("twice"), r.Addr())
	buf := make([]byte, 200)
	for range 2 {
		n, _, err := read(t, server, buf, 10*time.Second)
		if err != nil || string(buf[:n]) != "twice" {
			t.Fatalf("got %q, %v; want \"twice\"", buf[:n], err)
		}
	}
	if s := r.Stats(); s.Up.DroppedMTU != 1 || s.Up.Duplicated != 1 {
		t.Fatalf("DroppedMTU=%d Duplicated=%d, want 1 and 1", s.Up.DroppedMTU, s.Up.Duplicated)
	}
}

func TestRelaySeparateUpstreamPerClient(t *testing.T) {
	server := listenUDP(t)
	r := startRelay(t, Config{Target: server.LocalAddr()})
	c1, c2 := listenUDP(t), listenUDP(t)
	c1.WriteTo([]byte("one"), r.Addr())
	buf := make([]byte, 64)
	_, from1, err := read(t, server, buf, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c2.WriteTo([]byte("two"), r.Addr())
	_, from2, err := read(t, server, buf, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if from1 == from2 {
		t.Fatalf("both clients reach the target from %v", from1)
	}
	// Replies go back to the right client, from the relay's address.
	server.WriteTo([]byte("to two"), from2)
	server.WriteTo([]byte("to one"), from1)
	for _, want := range []struct {
		c   *transport.UDPConn
		msg string
	}{{c1, "to one"}, {c2, "to two"}} {
		n, from, err := read(t, want.c, buf, 10*time.Second)
		if err != nil || string(buf[:n]) != want.msg || from != r.Addr() {
			t.Fatalf("got %q from %v (%v), want %q from %v", buf[:n], from, err, want.msg, r.Addr())
		}
	}
	// A stranger writing to an upstream socket is ignored.
	stranger := listenUDP(t)
	stranger.WriteTo([]byte("spoof"), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), from1.Port()))
	server.WriteTo([]byte("real"), from1)
	n, _, err := read(t, c1, buf, 10*time.Second)
	if err != nil || string(buf[:n]) != "real" {
		t.Fatalf("got %q, %v; want \"real\"", buf[:n], err)
	}
	if s := r.Stats(); s.Foreign != 1 || s.ClientsSeen != 2 {
		t.Fatalf("Foreign=%d ClientsSeen=%d, want 1 and 2", s.Foreign, s.ClientsSeen)
	}
}

func TestRelayClientTableBoundAndExpiry(t *testing.T) {
	server := listenUDP(t)
	r := startRelay(t, Config{Target: server.LocalAddr(), MaxClients: 1, IdleTimeout: time.Hour})
	c1, c2 := listenUDP(t), listenUDP(t)
	buf := make([]byte, 64)
	c1.WriteTo([]byte("one"), r.Addr())
	if _, _, err := read(t, server, buf, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	c2.WriteTo([]byte("two"), r.Addr())
	// The marker from c1 proves c2's datagram has been handled before it.
	c1.WriteTo([]byte("marker"), r.Addr())
	n, _, err := read(t, server, buf, 10*time.Second)
	if err != nil || string(buf[:n]) != "marker" {
		t.Fatalf("got %q, %v; want the marker (c2 should be rejected)", buf[:n], err)
	}
	if s := r.Stats(); s.Rejected != 1 || s.Clients != 1 {
		t.Fatalf("Rejected=%d Clients=%d, want 1 and 1", s.Rejected, s.Clients)
	}

	// Expire c1 as if an hour had passed; c2 then gets its place.
	r.expireIdle(time.Now().Add(time.Hour))
	if s := r.Stats(); s.ClientsExpired != 1 || s.Clients != 0 {
		t.Fatalf("ClientsExpired=%d Clients=%d, want 1 and 0", s.ClientsExpired, s.Clients)
	}
	c2.WriteTo([]byte("two again"), r.Addr())
	n, _, err = read(t, server, buf, 10*time.Second)
	if err != nil || string(buf[:n]) != "two again" {
		t.Fatalf("got %q, %v", buf[:n], err)
	}
}

func TestRelayRunStopsAndRejectsBadConfig(t *testing.T) {
	server := listenUDP(t)
	r, err := New(Config{Listen: "127.0.0.1:0", Target: server.LocalAddr()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel = %v, want nil", err)
	}
	if err := r.Run(context.Background()); !errors.Is(err, ErrAlreadyRun) {
		t.Fatalf("second Run = %v, want ErrAlreadyRun", err)
	}
	if _, err := New(Config{Listen: "127.0.0.1:0"}); err == nil {
		t.Error("New without a target succeeded")
	}
	if _, err := New(Config{Listen: "127.0.0.1:0", Target: server.LocalAddr(), Up: transport.Impairment{Loss: 2}}); !errors.Is(err, transport.ErrBadImpairment) {
		t.Errorf("New with Loss 2: %v, want ErrBadImpairment", err)
	}
}

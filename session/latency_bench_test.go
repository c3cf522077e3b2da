package session

import (
	"context"
	"encoding/binary"
	"flag"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/netrak/netrak/raknet"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/relay"
)

// BenchmarkLatencyNetsim is raknet's BenchmarkLatencyNetsim for session,
// with raknet beside it in the same run: the client sends a 100-byte
// reliable-ordered message 60 times a second to the server through
// transport/relay (the relay examples/netsim runs) over UDP loopback,
// with 20 ms of latency and 5% loss in each direction (40 ms RTT). Each
// message carries its send time on the process's monotonic clock, and the
// server measures how long after sending it could read it: at least the
// 20 ms of the path, more when the message or an earlier one had to be
// resent. p50-ms, p99-ms and max-ms are over the b.N messages; lost-% is
// the share of datagrams the relay dropped, both directions together.
//
// The session client reaches the server through the relay: its token
// names the relay's address, and the server's own address as the one the
// server knows itself by (TokenParams.InternalAddresses).
//
// An op is one message, so the run takes b.N/60 seconds of real time per
// library; for 20 s each:
//
//	go test -run '^$' -bench LatencyNetsim -benchtime 1200x -count 6 ./session/
//
// The relay's seed fixes which datagrams are lost, so repeated runs mostly
// measure the same loss pattern; -session.seed picks another:
//
//	for s in 1 2 3 4 5 6; do go test -run '^$' -bench LatencyNetsim -benchtime 1200x -session.seed $s ./session/; done
func BenchmarkLatencyNetsim(b *testing.B) {
	b.Run("session", func(b *testing.B) { benchLatency(b, benchLatencySession) })
	b.Run("raknet", func(b *testing.B) { benchLatency(b, benchLatencyRaknet) })
}

// benchLatencySeed seeds the relay's loss: the same seed drops the same
// datagrams of each direction's sequence, so a run repeats its own tail
// closely; other seeds show other loss patterns.
var benchLatencySeed = flag.Uint64("session.seed", 1, "seed of BenchmarkLatencyNetsim's relay")

const (
	benchLatencyRate    = 60
	benchLatencySize    = 100
	benchLatencyOneWay  = 20 * time.Millisecond
	benchLatencyLoss    = 0.05
	benchLatencyTimeout = 30 * time.Second
)

// benchLatencyLib starts a server that calls got with every message its
// first connection receives, puts the relay (started by via, given the
// server's address) in front of it, connects a client through the relay,
// and returns a function that sends one reliable-ordered message and one
// that shuts everything down.
type benchLatencyLib func(b *testing.B, got func([]byte), via func(netip.AddrPort) netip.AddrPort) (send func([]byte) error, stop func())

func benchLatency(b *testing.B, lib benchLatencyLib) {
	epoch := time.Now()
	lat := make([]time.Duration, 0, b.N)
	received := make(chan struct{}, b.N)
	got := func(msg []byte) {
		if len(msg) < 13 {
			b.Errorf("message of %d bytes", len(msg))
			return
		}
		sent := time.Duration(binary.LittleEndian.Uint64(msg[5:]))
		lat = append(lat, time.Since(epoch)-sent)
		received <- struct{}{}
	}

	var r *relay.Relay
	ctx, cancel := context.WithCancel(context.Background())
	relayDone := make(chan error, 1)
	via := func(server netip.AddrPort) netip.AddrPort {
		imp := transport.Impairment{Latency: benchLatencyOneWay, Loss: benchLatencyLoss}
		var err error
		r, err = relay.New(relay.Config{Listen: "127.0.0.1:0", Target: server, Up: imp, Down: imp, Seed: *benchLatencySeed})
		if err != nil {
			b.Fatal(err)
		}
		go func() { relayDone <- r.Run(ctx) }()
		return r.Addr()
	}
	send, stop := lib(b, got, via)
	defer func() {
		stop()
		cancel()
		if r != nil {
			<-relayDone
		}
	}()

	msg := make([]byte, benchLatencySize)
	msg[0] = raknet.IDUserPacketEnum
	tick := time.NewTicker(time.Second / benchLatencyRate)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		binary.LittleEndian.PutUint32(msg[1:], uint32(i))
		binary.LittleEndian.PutUint64(msg[5:], uint64(time.Since(epoch)))
		if err := send(msg); err != nil {
			b.Fatal(err)
		}
	}
	timeout := time.After(benchLatencyTimeout)
	for n := range b.N {
		select {
		case <-received:
		case <-timeout:
			b.Fatalf("%d of %d messages arrived", n, b.N)
		}
	}
	b.StopTimer()

	// The server's reader appended the last latency before signalling it.
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/float64(time.Millisecond), "max-ms")
	st := r.Stats()
	if sent := st.Up.Sent + st.Down.Sent; sent > 0 {
		b.ReportMetric(100*float64(st.Up.DroppedLoss+st.Down.DroppedLoss)/float64(sent), "lost-%")
	}
}

// benchReadAll calls got with every message read until read fails, then
// closes done.
func benchReadAll(read func([]byte) (Message, error), got func([]byte), done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 2048)
	for {
		m, err := read(buf)
		if err != nil {
			return
		}
		got(m.Data)
	}
}

func benchLatencySession(b *testing.B, got func([]byte), via func(netip.AddrPort) netip.AddrPort) (func([]byte) error, func()) {
	l, accepted := benchSessionServer(b)
	server := l.tc.LocalAddr()
	done := make(chan struct{})
	go func() {
		c, ok := <-accepted
		if !ok {
			close(done)
			return
		}
		benchReadAll(c.ReadMessageInto, got, done)
	}()
	relayAddr := via(server)
	ctx, cancel := context.WithTimeout(context.Background(), benchLatencyTimeout)
	defer cancel()
	c, err := Dial(ctx, benchToken(b, 1, relayAddr, server), ClientConfig{})
	if err != nil {
		l.Close()
		b.Fatal(err)
	}
	send := func(msg []byte) error {
		_, err := c.WriteMessage(msg, reliability.ReliableOrdered, 0, reliability.Medium)
		return err
	}
	return send, func() {
		c.Close()
		l.Close()
		<-done
	}
}

func benchLatencyRaknet(b *testing.B, got func([]byte), via func(netip.AddrPort) netip.AddrPort) (func([]byte) error, func()) {
	l, err := raknet.Listen("udp4", "127.0.0.1:0", raknet.ListenConfig{})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		c, err := l.AcceptConn(context.Background())
		if err != nil {
			close(done)
			return
		}
		benchReadAll(c.ReadMessageInto, got, done)
	}()
	relayAddr := via(netip.MustParseAddrPort(l.Addr().String()))
	ctx, cancel := context.WithTimeout(context.Background(), benchLatencyTimeout)
	defer cancel()
	c, err := raknet.DialContext(ctx, "udp", relayAddr.String())
	if err != nil {
		l.Close()
		b.Fatal(err)
	}
	send := func(msg []byte) error {
		_, err := c.WriteMessage(msg, reliability.ReliableOrdered, 0, reliability.Medium)
		return err
	}
	return send, func() {
		c.Close()
		l.Close()
		<-done
	}
}

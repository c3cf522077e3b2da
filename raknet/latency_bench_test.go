package raknet

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	goraknet "github.com/sandertv/go-raknet"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/relay"
)

// Delivery latency of a game-like stream through an impaired path, raknet
// against go-raknet in the same run: the client sends reliable-ordered
// 100-byte messages at 60 per second to the server through
// transport/relay (the relay examples/netsim runs) over UDP loopback,
// with 20 ms of latency and 5% loss in each direction (40 ms RTT). Each
// message carries its send time on the process's monotonic clock, and the
// server measures how long after sending it could read it: at least the
// 20 ms of the path, more when the message or an earlier one had to be
// resent. p50-ms, p99-ms and max-ms are over the b.N messages.
//
// An op is one message, so the run takes b.N/60 seconds of real time per
// library; the default -benchtime gives about a hundred messages, too few
// for a meaningful p99. For 20 s each:
//
//	go test -run '^$' -bench LatencyNetsim -benchtime 1200x ./raknet/
func BenchmarkLatencyNetsim(b *testing.B) {
	b.Run("raknet", func(b *testing.B) { benchLatency(b, latencyRaknet{}) })
	b.Run("goraknet", func(b *testing.B) { benchLatency(b, latencyGoRaknet{}) })
}

const (
	latencyRate    = 60
	latencyMsgSize = 100
	latencyOneWay  = 20 * time.Millisecond
	latencyLoss    = 0.05
)

// latencyLib is what the latency benchmark needs from a RakNet library.
type latencyLib interface {
	// listen starts a server on loopback that calls got with every message
	// its first connection receives, and returns its address and a
	// function that shuts it down.
	listen(b *testing.B, got func([]byte)) (netip.AddrPort, func())
	// dial connects to addr and returns a function that sends one
	// reliable-ordered message and one that closes the connection.
	dial(b *testing.B, addr string) (func([]byte) error, func())
}

func benchLatency(b *testing.B, lib latencyLib) {
	epoch := time.Now()
	lat := make([]time.Duration, 0, b.N)
	received := make(chan struct{}, b.N)
	server, stopServer := lib.listen(b, func(msg []byte) {
		if len(msg) < 13 {
			b.Errorf("message of %d bytes", len(msg))
			return
		}
		sent := time.Duration(binary.LittleEndian.Uint64(msg[5:]))
		lat = append(lat, time.Since(epoch)-sent)
		received <- struct{}{}
	})
	defer stopServer()

	imp := transport.Impairment{Latency: latencyOneWay, Loss: latencyLoss}
	r, err := relay.New(relay.Config{Listen: "127.0.0.1:0", Target: server, Up: imp, Down: imp, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	relayDone := make(chan error, 1)
	go func() { relayDone <- r.Run(ctx) }()
	defer func() {
		cancel()
		<-relayDone
	}()

	send, closeClient := lib.dial(b, r.Addr().String())
	defer closeClient()

	msg := benchMessage(latencyMsgSize)
	tick := time.NewTicker(time.Second / latencyRate)
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
	timeout := time.After(30 * time.Second)
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

type latencyRaknet struct{}

func (latencyRaknet) listen(b *testing.B, got func([]byte)) (netip.AddrPort, func()) {
	l, err := Listen("udp4", "127.0.0.1:0", ListenConfig{})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := l.AcceptConn(context.Background())
		if err != nil {
			return
		}
		buf := make([]byte, 2048)
		for {
			m, err := c.ReadMessageInto(buf)
			if err != nil {
				return
			}
			got(m.Data)
		}
	}()
	return l.local, func() {
		l.Close()
		<-done
	}
}

func (latencyRaknet) dial(b *testing.B, addr string) (func([]byte) error, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := DialContext(ctx, "udp", addr)
	if err != nil {
		b.Fatal(err)
	}
	send := func(msg []byte) error {
		_, err := c.Write(msg)
		return err
	}
	return send, func() { c.Close() }
}

type latencyGoRaknet struct{}

func (latencyGoRaknet) listen(b *testing.B, got func([]byte)) (netip.AddrPort, func()) {
	l, err := goraknet.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	accepted := make(chan *goraknet.Conn, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc, err := l.Accept()
		if err != nil {
			return
		}
		c := nc.(*goraknet.Conn)
		accepted <- c
		for {
			p, err := c.ReadPacket()
			if err != nil {
				return
			}
			got(p)
		}
	}()
	return netip.MustParseAddrPort(l.Addr().String()), func() {
		// A go-raknet listener leaves its connections open; this one
		// would wait for its peer's timeout if its disconnection
		// notification was lost.
		l.Close()
		select {
		case c := <-accepted:
			c.Close()
		case <-done:
		}
		<-done
	}
}

func (latencyGoRaknet) dial(b *testing.B, addr string) (func([]byte) error, func()) {
	c, err := goraknet.DialTimeout(addr, 30*time.Second)
	if err != nil {
		b.Fatal(fmt.Errorf("go-raknet dial: %w", err))
	}
	send := func(msg []byte) error {
		_, err := c.Write(msg)
		return err
	}
	// As in the throughput benchmark: wait for a closing go-raknet
	// connection, so that the next round starts clean.
	return send, func() {
		c.Close()
		<-c.Context().Done()
	}
}

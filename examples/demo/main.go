package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/relay"
)

// The scenario: 200 pings, one every 10ms, through a path with this
// impairment in each direction.
const (
	pings    = 200
	interval = 10 * time.Millisecond
)

var impairment = transport.Impairment{
	Latency:   40 * time.Millisecond,
	Jitter:    10 * time.Millisecond,
	Loss:      0.10,
	Duplicate: 0.02,
	Reorder:   0.02,
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// result is what the demo observed, for the test to check.
type result struct {
	serverReceived int // pings the server read, duplicates included
	clientReceived int // pongs the client read, duplicates included
	uniquePongs    int
	relay          relay.Stats
}

func run(ctx context.Context, out io.Writer) error {
	_, err := demo(ctx, out)
	return err
}

func demo(ctx context.Context, out io.Writer) (result, error) {
	var res result
	server, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		return res, err
	}
	defer server.Close()
	client, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		return res, err
	}
	defer client.Close()

	r, err := relay.New(relay.Config{
		Listen: "127.0.0.1:0",
		Target: server.LocalAddr(),
		Up:     impairment,
		Down:   impairment,
		Seed:   2026,
	})
	if err != nil {
		return res, err
	}
	relayCtx, stopRelay := context.WithCancel(ctx)
	defer stopRelay()
	relayDone := make(chan error, 1)
	go func() { relayDone <- r.Run(relayCtx) }()

	fmt.Fprintf(out, "netrak demo: a client and a server exchange UDP datagrams through the impairment relay\n")
	fmt.Fprintf(out, "  client %v -> relay %v -> server %v\n", client.LocalAddr(), r.Addr(), server.LocalAddr())
	fmt.Fprintf(out, "  each direction: latency %v ± %v, loss %.0f%%, duplication %.0f%%, reordering %.0f%%\n\n",
		impairment.Latency, impairment.Jitter, impairment.Loss*100, impairment.Duplicate*100, impairment.Reorder*100)

	// The server answers every ping with a pong carrying the same payload.
	serverDone := make(chan int, 1)
	go func() {
		buf := make([]byte, 1500)
		n := 0
		for {
			m, from, err := server.ReadFrom(buf)
			if err != nil {
				serverDone <- n
				return
			}
			n++
			server.WriteTo(buf[:m], from)
		}
	}()

	// The client reads pongs and measures round trips from the send time in
	// each payload.
	type clientStats struct {
		received, unique int
		minRTT, maxRTT   time.Duration
		sumRTT           time.Duration
	}
	start := time.Now()
	clientDone := make(chan clientStats, 1)
	go func() {
		var s clientStats
		seen := make(map[uint32]bool)
		buf := make([]byte, 1500)
		for {
			m, _, err := client.ReadFrom(buf)
			if err != nil {
				clientDone <- s
				return
			}
			if m < 12 {
				continue
			}
			s.received++
			seq := binary.BigEndian.Uint32(buf)
			if seen[seq] {
				continue
			}
			seen[seq] = true
			s.unique++
			rtt := time.Since(start) - time.Duration(binary.BigEndian.Uint64(buf[4:]))
			if s.unique == 1 || rtt < s.minRTT {
				s.minRTT = rtt
			}
			s.maxRTT = max(s.maxRTT, rtt)
			s.sumRTT += rtt
		}
	}()

	// Pings go out on a fixed schedule; a ping that is late because the
	// machine is busy goes out at once, so the run stays near two seconds.
	pace := time.NewTimer(0)
	defer pace.Stop()
	payload := make([]byte, 64)
	sent := 0
	for ; sent < pings; sent++ {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-pace.C:
		}
		binary.BigEndian.PutUint32(payload, uint32(sent))
		binary.BigEndian.PutUint64(payload[4:], uint64(time.Since(start)))
		if err := client.WriteTo(payload, r.Addr()); err != nil {
			return res, err
		}
		pace.Reset(time.Until(start.Add(time.Duration(sent+1) * interval)))
	}
	// Give the last pongs time to cross the delayed path back.
	client.SetReadDeadline(time.Now().Add(4 * (impairment.Latency + impairment.Jitter)))
	cs := <-clientDone
	server.Close()
	res.serverReceived = <-serverDone
	stopRelay()
	if err := <-relayDone; err != nil && !errors.Is(err, net.ErrClosed) {
		return res, err
	}
	res.clientReceived, res.uniquePongs = cs.received, cs.unique
	res.relay = r.Stats()

	fmt.Fprintf(out, "client sent %d pings over %v\n", sent, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(out, "server received %d (duplicates included) and answered each\n", res.serverReceived)
	fmt.Fprintf(out, "client received %d pongs, %d distinct: %.1f%% of pings answered\n",
		cs.received, cs.unique, 100*float64(cs.unique)/float64(sent))
	if cs.unique > 0 {
		fmt.Fprintf(out, "round trip: min %v, mean %v, max %v\n",
			cs.minRTT.Round(100*time.Microsecond), (cs.sumRTT / time.Duration(cs.unique)).Round(100*time.Microsecond),
			cs.maxRTT.Round(100*time.Microsecond))
	}
	fmt.Fprintf(out, "\nrelay counters:\n%v\n", res.relay)
	if cs.unique == 0 {
		return res, errors.New("no pong came back")
	}
	return res, nil
}

package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport"
)

// protocolID is the demo game's netcode protocol id ("netrak" in ASCII).
const protocolID = 0x6e657472616b

// payloadHeader is the client id (8 bytes) and sequence number (4 bytes)
// at the front of each payload, plus room for the pattern.
const payloadHeader = 16

// payload builds payload seq of client id: the header, then bytes that
// depend on both, so that a payload delivered to the wrong client or
// corrupted shows.
func payload(b []byte, id uint64, seq uint32) []byte {
	binary.LittleEndian.PutUint64(b, id)
	binary.LittleEndian.PutUint32(b[8:], seq)
	for k := 12; k < len(b); k++ {
		b[k] = byte(uint64(seq)*13 + uint64(k)*5 + id)
	}
	return b
}

// clientID is the id the backend gives client i.
func clientID(i int) uint64 { return uint64(1001 + i) }

// clientResult is what one netcode client saw.
type clientResult struct {
	id                uint64
	slot, maxSlots    int
	connectTime       time.Duration
	sent, echoed      int
	corrupt, repeated int
	stats             netcode.ClientStats
	err               error
}

// netcodePart runs part 1: netcode clients exchanging payloads with an
// echoing server through a lossy relay.
func netcodePart(ctx context.Context, cfg config, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	fmt.Fprintf(out, "== Part 1: netcode 1.02, %d clients, encrypted payloads through a lossy link\n", cfg.clients)

	key := netcode.GenerateKey()
	serverConn, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		return err
	}
	internal := serverConn.LocalAddr()
	server, err := netcode.ListenServer(serverConn, netcode.ServerConfig{
		ProtocolID:    protocolID,
		PrivateKey:    key,
		PublicAddress: internal,
		MaxClients:    max(8, cfg.clients),
	})
	if err != nil {
		serverConn.Close()
		return err
	}
	serverClosed := false
	closeServer := func() {
		if !serverClosed {
			serverClosed = true
			server.Close()
		}
	}
	defer closeServer()

	r, stopRelay, err := startRelay(ctx, internal, cfg.link1, cfg.seed)
	if err != nil {
		return err
	}
	relayStopped := false
	defer func() {
		if !relayStopped {
			stopRelay()
		}
	}()
	public := r.Addr()
	fmt.Fprintf(out, "  link: %s, each way\n", describeLink(cfg.link1))
	fmt.Fprintf(out, "  server %v, relay %v in front of it\n", internal, public)
	fmt.Fprintf(out, "  backend: tokens list public address %v (the relay: clients dial it)\n", public)
	fmt.Fprintf(out, "           and internal address %v (the server's ServerConfig.PublicAddress)\n", internal)

	// The server echoes every payload to the client that sent it.
	echoDone := make(chan struct{})
	go func() {
		defer close(echoDone)
		for {
			m, err := server.Receive(ctx)
			if err != nil {
				return
			}
			// A client that has just left cannot be answered; its
			// payloads are simply not echoed.
			server.Send(m.ClientIndex, m.Payload)
		}
	}()

	// The backend mints one token per client.
	tokens := make([][]byte, cfg.clients)
	for i := range tokens {
		tokens[i], err = netcode.GenerateConnectToken(&netcode.TokenParams{
			ClientID:          clientID(i),
			PublicAddresses:   []netip.AddrPort{public},
			InternalAddresses: []netip.AddrPort{internal},
			ProtocolID:        protocolID,
			PrivateKey:        key,
		})
		if err != nil {
			return err
		}
	}
	results := make([]clientResult, cfg.clients)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = runClient(ctx, cfg, clientID(i), tokens[i]) })
	}
	wg.Wait()

	var failures failureList
	for _, res := range results {
		if res.err != nil {
			fmt.Fprintf(out, "  client %d: %v\n", res.id, res.err)
			failures = append(failures, fmt.Errorf("client %d: %w", res.id, res.err))
			continue
		}
		lost := res.sent - res.echoed
		fmt.Fprintf(out, "  client %d: slot %d/%d, connected in %v; sent %d payloads of %d B, %d echoed intact, %d lost (%s)",
			res.id, res.slot, res.maxSlots, res.connectTime.Round(time.Millisecond), res.sent, cfg.size, res.echoed, lost,
			percent(float64(lost)/float64(res.sent)))
		if n := res.stats.Dropped[netcode.ClientDropReplayed]; n > 0 {
			fmt.Fprintf(out, "; replays dropped: %d", n)
		}
		fmt.Fprintln(out)
		if res.corrupt > 0 || res.repeated > 0 {
			failures = append(failures, fmt.Errorf("client %d: %d corrupt and %d repeated echoes", res.id, res.corrupt, res.repeated))
		}
		// Both ways at the configured loss, about (1-loss)² of the
		// payloads come back; far fewer means the path is broken.
		if want := float64(res.sent) * (1 - cfg.link1.Loss) * (1 - cfg.link1.Loss) / 2; float64(res.echoed) < want {
			failures = append(failures, fmt.Errorf("client %d: only %d of %d payloads echoed", res.id, res.echoed, res.sent))
		}
	}

	events := serverEvents(ctx, server, results)
	closeServer()
	<-echoDone
	relayStopped = true
	relayStats, relayErr := stopRelay()

	st := server.Stats()
	var reasons []string
	for _, r := range []netcode.DisconnectReason{netcode.ReasonClientDisconnected, netcode.ReasonTimedOut, netcode.ReasonServerDisconnected} {
		if n := events.reasons[r]; n > 0 {
			reasons = append(reasons, fmt.Sprintf("%s: %d", r, n))
		}
	}
	fmt.Fprintf(out, "  server: %d connects, %d disconnects (%s); %d payloads received, %d sent\n",
		st.Connects, st.Disconnects, strings.Join(reasons, ", "), st.PayloadsReceived, st.PayloadsSent)
	fmt.Fprintf(out, "  server drops: %s\n", serverDrops(st.Dropped))
	if st.Dropped[netcode.ServerDropNoMapping] > 0 {
		fmt.Fprintln(out, "    (no mapping: each client sends 10 redundant disconnect packets; the first frees its slot)")
	}
	if st.Dropped[netcode.ServerDropReplayed] > 0 {
		fmt.Fprintln(out, "    (replayed: the relay's duplicates, refused by replay protection)")
	}
	printRelay(out, relayStats)

	if events.err != nil {
		failures = append(failures, fmt.Errorf("server events: %w", events.err))
	}
	if events.connects != cfg.clients {
		failures = append(failures, fmt.Errorf("server saw %d connects, want %d", events.connects, cfg.clients))
	}
	if n := events.reasons[netcode.ReasonClientDisconnected]; n != cfg.clients {
		failures = append(failures, fmt.Errorf("%d of %d clients disconnected cleanly", n, cfg.clients))
	}
	if relayErr != nil {
		failures = append(failures, fmt.Errorf("relay: %w", relayErr))
	}
	if len(failures) > 0 {
		return failures
	}
	fmt.Fprintln(out, "part 1: ok")
	return nil
}

// runClient dials through the relay, sends payloads at cfg.rate for
// cfg.duration, checks every echo, and disconnects.
func runClient(ctx context.Context, cfg config, id uint64, token []byte) clientResult {
	res := clientResult{id: id}
	conn, err := transport.ListenUDP("udp4", "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		res.err = err
		return res
	}
	start := time.Now()
	cc, err := netcode.Dial(ctx, conn, token, netcode.ClientConfig{ProtocolID: protocolID})
	if err != nil {
		res.err = fmt.Errorf("dial: %w", err)
		return res
	}
	res.connectTime = time.Since(start)
	res.slot, res.maxSlots = cc.ClientIndex(), cc.MaxClients()

	total := max(1, int(cfg.duration*time.Duration(cfg.rate)/time.Second))
	// The receiver checks each echo against what was sent and reports
	// when every payload has come back.
	recvCtx, stopRecv := context.WithCancel(ctx)
	allBack := make(chan struct{})
	recvDone := make(chan struct{})
	seen := make([]bool, total)
	go func() {
		defer close(recvDone)
		want := make([]byte, cfg.size)
		for {
			m, err := cc.Receive(recvCtx)
			if err != nil {
				return
			}
			p := m.Payload
			if len(p) != cfg.size || binary.LittleEndian.Uint64(p) != id {
				res.corrupt++
				continue
			}
			seq := binary.LittleEndian.Uint32(p[8:])
			if int(seq) >= total || string(p) != string(payload(want, id, seq)) {
				res.corrupt++
				continue
			}
			if seen[seq] {
				res.repeated++
				continue
			}
			seen[seq] = true
			res.echoed++
			if res.echoed == total {
				close(allBack)
			}
		}
	}()

	tick := time.NewTicker(time.Second / time.Duration(cfg.rate))
	defer tick.Stop()
	buf := make([]byte, cfg.size)
	for seq := 0; seq < total && res.err == nil; seq++ {
		if err := cc.Send(payload(buf, id, uint32(seq))); err != nil {
			res.err = fmt.Errorf("send: %w", err)
			break
		}
		res.sent++
		if seq+1 < total {
			select {
			case <-tick.C:
			case <-ctx.Done():
				res.err = ctx.Err()
			}
		}
	}
	// Echoes of the last payloads are still crossing the link; wait for
	// them, but no longer than a few worst-case round trips.
	if res.err == nil {
		drain := time.NewTimer(4*(cfg.link1.Latency+cfg.link1.Jitter) + 100*time.Millisecond)
		select {
		case <-allBack:
		case <-drain.C:
		case <-ctx.Done():
			res.err = ctx.Err()
		}
		drain.Stop()
	}
	stopRecv()
	<-recvDone
	res.stats = cc.Stats()
	cc.Close() // sends the redundant disconnect packets
	return res
}

// failureList is every check that failed, on one line.
type failureList []error

func (l failureList) Error() string {
	s := make([]string, len(l))
	for i, err := range l {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

func (l failureList) Unwrap() []error { return l }

// eventTally is what the server reported about its clients coming and
// going.
type eventTally struct {
	connects int
	reasons  map[netcode.DisconnectReason]int
	err      error
}

// serverEvents collects the server's events until every client that
// connected has left again. The clients have closed by now, so their
// disconnect packets are at most one trip through the relay away (or, if
// all were lost, the server times the clients out).
func serverEvents(ctx context.Context, server *netcode.ServerConn, results []clientResult) eventTally {
	connected := 0
	for _, res := range results {
		if res.maxSlots > 0 {
			connected++
		}
	}
	t := eventTally{reasons: map[netcode.DisconnectReason]int{}}
	for left := 0; left < connected; {
		ev, err := server.NextEvent(ctx)
		if err != nil {
			t.err = err
			break
		}
		switch ev.Kind {
		case netcode.EventConnected:
			t.connects++
		case netcode.EventDisconnected:
			t.reasons[ev.Reason]++
			left++
		}
	}
	return t
}

// serverDrops lists the nonzero drop counters by reason.
func serverDrops(d netcode.ServerDropCounts) string {
	var parts []string
	for r, n := range d {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", netcode.ServerDropReason(r), n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

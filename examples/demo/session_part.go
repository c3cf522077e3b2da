package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/session"
)

// The two streams of each session client. Positions have a channel of
// their own: a sequenced message on a channel with ordered ones is held
// behind any ordered message still missing, which is what a position
// update must never wait for.
const (
	eventChannel    = 0 // reliable-ordered game events
	positionChannel = 1 // unreliable-sequenced position updates
	positionBytes   = 16
)

// eventSize is the length of ordered message k: mostly small events,
// every 25th a 3000-byte one that the reliability layer splits across
// three netcode payloads.
func eventSize(k int) int {
	if k%25 == 24 {
		return 3000
	}
	return 40 + k%5*30
}

// event builds ordered message k of client id: the id, k, then bytes
// that depend on both.
func event(id uint64, k int) []byte {
	b := make([]byte, eventSize(k))
	binary.LittleEndian.PutUint64(b, id)
	binary.LittleEndian.PutUint32(b[8:], uint32(k))
	for j := 12; j < len(b); j++ {
		b[j] = byte(uint64(k)*29 + uint64(j)*3 + id)
	}
	return b
}

// position builds position update seq into b: seq, then x, y and z of a
// client walking in a circle.
func position(b []byte, seq int) []byte {
	b = b[:positionBytes]
	a := float64(seq) / 60
	binary.LittleEndian.PutUint32(b, uint32(seq))
	binary.LittleEndian.PutUint32(b[4:], math.Float32bits(float32(10*math.Cos(a))))
	binary.LittleEndian.PutUint32(b[8:], math.Float32bits(float32(10*math.Sin(a))))
	binary.LittleEndian.PutUint32(b[12:], math.Float32bits(64))
	return b
}

// sessionResult is what one session client saw.
type sessionResult struct {
	id          uint64
	slot        int
	connectTime time.Duration
	eventsBack  int   // ordered echoes that came intact and in order
	eventErr    error // the first ordered echo that did not
	posSent     int
	posBack     int
	backwards   int // position echoes older than one before
	stats       session.Stats
	err         error
}

// sessionPart runs part 3: session clients, each with an ordered stream
// and a sequenced one, through a lossy link to a server that echoes both.
func sessionPart(ctx context.Context, cfg config, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	fmt.Fprintf(out, "== Part 3: session (netcode carrying RakNet reliability), %d clients, ordered and sequenced streams side by side\n", cfg.sessClients)

	key := netcode.GenerateKey()
	l, err := session.ListenUDP("udp4", "127.0.0.1:0", session.ServerConfig{
		Netcode: netcode.ServerConfig{ProtocolID: protocolID, PrivateKey: key, MaxClients: max(8, cfg.sessClients)},
	})
	if err != nil {
		return err
	}
	listenerClosed := false
	closeListener := func() {
		if !listenerClosed {
			listenerClosed = true
			l.Close()
		}
	}
	defer closeListener()
	internal := l.Addr().(*net.UDPAddr).AddrPort()

	r, stopRelay, err := startRelay(ctx, internal, cfg.link3, cfg.seed+2)
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
	ticks := sessionTicks(cfg)
	fmt.Fprintf(out, "  link: %s, each way\n", describeLink(cfg.link3))
	fmt.Fprintf(out, "  server %v, relay %v in front of it; tokens name both, as in part 1\n", internal, public)
	fmt.Fprintf(out, "  each client, for %v: %d events reliable-ordered on channel %d, and %d position updates at %d Hz\n",
		cfg.sessDuration, cfg.sessMessages, eventChannel, ticks, cfg.sessRate)
	fmt.Fprintf(out, "  unreliable-sequenced on channel %d at high priority, so they never wait behind a lost event\n", positionChannel)

	// The server echoes both streams as they came, positions at high
	// priority again.
	var echoed atomic.Int64
	var echoes sync.WaitGroup
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		for {
			c, err := l.AcceptConn(ctx)
			if err != nil {
				return
			}
			echoes.Go(func() { sessionEcho(c, &echoed) })
		}
	}()

	results := make([]sessionResult, cfg.sessClients)
	var wg sync.WaitGroup
	for i := range results {
		id := clientID(i)
		token, err := netcode.GenerateConnectToken(&netcode.TokenParams{
			ClientID:          id,
			PublicAddresses:   []netip.AddrPort{public},
			InternalAddresses: []netip.AddrPort{internal},
			ProtocolID:        protocolID,
			PrivateKey:        key,
		})
		if err != nil {
			return err
		}
		wg.Go(func() { results[i] = runSessionClient(ctx, cfg, id, token) })
	}
	wg.Wait()

	var failures failureList
	connected := 0
	for _, res := range results {
		if res.err != nil {
			fmt.Fprintf(out, "  client %d: %v\n", res.id, res.err)
			failures = append(failures, fmt.Errorf("client %d: %w", res.id, res.err))
			if res.slot < 0 {
				continue
			}
		}
		connected++
		st, rel := res.stats, res.stats.Reliability
		events := fmt.Sprintf("%d events echoed complete and in order", res.eventsBack)
		if res.eventsBack != cfg.sessMessages {
			events = fmt.Sprintf("only %d of %d events echoed in order", res.eventsBack, cfg.sessMessages)
		}
		order := "never backwards"
		if res.backwards > 0 {
			order = fmt.Sprintf("%d BACKWARDS", res.backwards)
		}
		fmt.Fprintf(out, "  client %d: slot %d, connected in %v; %s; positions: %d sent, %d echoed (%s), %s\n",
			res.id, res.slot, res.connectTime.Round(time.Millisecond), events, res.posSent, res.posBack,
			percent(float64(res.posBack)/float64(max(1, res.posSent))), order)
		fmt.Fprintf(out, "    RTT %v, %d frames resent; %d messages sent, %d delivered; netcode packets %d sent, %d received; keep-alives %d sent, %d received\n",
			rel.SmoothedRTT.Round(100*time.Microsecond), rel.Resends, rel.MessagesSent, rel.MessagesDelivered,
			st.PacketsSent, st.PacketsReceived, st.KeepAlivesSent, st.KeepAlivesReceived)
		switch {
		case res.eventErr != nil:
			failures = append(failures, fmt.Errorf("client %d: %w", res.id, res.eventErr))
		case res.eventsBack != cfg.sessMessages && res.err == nil:
			failures = append(failures, fmt.Errorf("client %d: %d of %d events echoed", res.id, res.eventsBack, cfg.sessMessages))
		}
		if res.backwards > 0 {
			failures = append(failures, fmt.Errorf("client %d: %d position echoes went backwards", res.id, res.backwards))
		}
		// Both ways at the configured loss, about (1-loss)² of the
		// positions come back, a few fewer for those overtaken on the
		// way; far fewer means the path is broken.
		if want := float64(res.posSent) * (1 - cfg.link3.Loss) * (1 - cfg.link3.Loss) / 2; res.err == nil && float64(res.posBack) < want {
			failures = append(failures, fmt.Errorf("client %d: only %d of %d positions echoed", res.id, res.posBack, res.posSent))
		}
	}

	if connected > 0 {
		fmt.Fprintln(out, "    (netcode sends a keep-alive only after 100 ms without a payload: a busy connection carries almost none)")
	}

	tally := sessionEvents(ctx, l, connected)
	closeListener()
	<-acceptDone
	echoes.Wait()
	relayStopped = true
	relayStats, relayErr := stopRelay()

	var reasons []string
	for _, name := range tally.order {
		reasons = append(reasons, fmt.Sprintf("%s: %d", name, tally.reasons[name]))
	}
	fmt.Fprintf(out, "  server: %d connects, %d disconnects (%s); %d messages echoed\n",
		tally.connects, tally.disconnects, strings.Join(reasons, ", "), echoed.Load())
	printRelay(out, relayStats)

	if tally.err != nil {
		failures = append(failures, fmt.Errorf("server events: %w", tally.err))
	}
	if tally.connects != cfg.sessClients {
		failures = append(failures, fmt.Errorf("server saw %d connects, want %d", tally.connects, cfg.sessClients))
	}
	if n := tally.reasons[sessionReason(session.ErrPeerClosed)]; n != cfg.sessClients {
		failures = append(failures, fmt.Errorf("%d of %d clients disconnected cleanly", n, cfg.sessClients))
	}
	if relayErr != nil {
		failures = append(failures, fmt.Errorf("relay: %w", relayErr))
	}
	if len(failures) > 0 {
		return failures
	}
	fmt.Fprintln(out, "part 3: ok")
	return nil
}

// sessionTicks is how many position updates each client sends.
func sessionTicks(cfg config) int {
	return max(1, int(cfg.sessDuration*time.Duration(cfg.sessRate)/time.Second))
}

// sessionEcho sends every message of c back as it came; positions go at
// high priority, so they overtake queued events and resends.
func sessionEcho(c *session.Conn, echoed *atomic.Int64) {
	defer c.Close()
	var buf []byte // WriteMessage copies, so one buffer serves every read
	for {
		m, err := c.ReadMessageInto(buf)
		if err != nil {
			return
		}
		buf = m.Data
		prio := reliability.Medium
		if m.Reliability == reliability.UnreliableSequenced {
			prio = reliability.High
		}
		if _, err := c.WriteMessage(m.Data, m.Reliability, m.Channel, prio); err != nil {
			return
		}
		echoed.Add(1)
	}
}

// runSessionClient dials through the relay, runs both streams for
// cfg.sessDuration, waits for the events' echoes, and closes gracefully.
func runSessionClient(ctx context.Context, cfg config, id uint64, token []byte) sessionResult {
	res := sessionResult{id: id, slot: -1}
	start := time.Now()
	c, err := session.Dial(ctx, token, session.ClientConfig{Netcode: netcode.ClientConfig{ProtocolID: protocolID}})
	if err != nil {
		res.err = fmt.Errorf("dial: %w", err)
		return res
	}
	res.connectTime = time.Since(start)
	res.slot = c.ClientIndex()
	// The end of ctx unblocks reads and writes.
	defer context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })()

	// The reader checks both streams' echoes and says when every event
	// is back. Its counters are read once it has returned.
	allEvents := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		last := -1
		var buf []byte
		for {
			m, err := c.ReadMessageInto(buf)
			if err != nil {
				return
			}
			buf = m.Data
			switch {
			case m.Channel == positionChannel && m.Reliability == reliability.UnreliableSequenced && len(m.Data) == positionBytes:
				seq := int(binary.LittleEndian.Uint32(m.Data))
				if seq <= last {
					res.backwards++
				}
				last = max(last, seq)
				res.posBack++
			case m.Channel == eventChannel && m.Reliability == reliability.ReliableOrdered:
				k := res.eventsBack
				if res.eventErr != nil {
					continue
				}
				if k >= cfg.sessMessages || !bytes.Equal(m.Data, event(id, k)) {
					res.eventErr = fmt.Errorf("ordered echo %d is not event %d (%d bytes)", k, k, len(m.Data))
					continue
				}
				res.eventsBack++
				if res.eventsBack == cfg.sessMessages {
					close(allEvents)
				}
			default:
				if res.eventErr == nil {
					res.eventErr = fmt.Errorf("unexpected echo: %v on channel %d, %d bytes", m.Reliability, m.Channel, len(m.Data))
				}
			}
		}
	}()

	// Each tick sends one position and the events due by then, spread
	// evenly over the ticks.
	ticks := sessionTicks(cfg)
	tick := time.NewTicker(time.Second / time.Duration(cfg.sessRate))
	defer tick.Stop()
	pos := make([]byte, positionBytes)
	sentEvents := 0
send:
	for t := range ticks {
		if _, err := c.WriteMessage(position(pos, t), reliability.UnreliableSequenced, positionChannel, reliability.High); err != nil {
			res.err = fmt.Errorf("send position: %w", err)
			break
		}
		res.posSent++
		for ; sentEvents < (t+1)*cfg.sessMessages/ticks; sentEvents++ {
			if _, err := c.WriteMessage(event(id, sentEvents), reliability.ReliableOrdered, eventChannel, reliability.Medium); err != nil {
				res.err = fmt.Errorf("send event %d: %w", sentEvents, err)
				break send
			}
		}
		if t+1 < ticks {
			select {
			case <-tick.C:
			case <-ctx.Done():
				res.err = ctx.Err()
				break send
			}
		}
	}
	// Lost events are resent until they are through; the last positions'
	// echoes are given a few worst-case trips, and any still missing are
	// lost.
	if res.err == nil {
		drain := time.NewTimer(4*(cfg.link3.Latency+cfg.link3.Jitter) + 100*time.Millisecond)
		for waiting := 2; waiting > 0 && res.err == nil; waiting-- {
			select {
			case <-allEvents:
				allEvents = nil
			case <-drain.C:
			case <-ctx.Done():
				res.err = ctx.Err()
			}
		}
		drain.Stop()
	}
	res.stats = c.Stats()
	c.Close() // graceful: waits until the server has acknowledged everything
	<-readDone
	if errors.Is(res.err, context.DeadlineExceeded) && res.eventsBack < cfg.sessMessages {
		res.err = fmt.Errorf("%d of %d events echoed: %w", res.eventsBack, cfg.sessMessages, res.err)
	}
	return res
}

// sessionTally is what the server reported about its clients.
type sessionTally struct {
	connects, disconnects int
	reasons               map[string]int
	order                 []string // reasons in the order first seen
	err                   error
}

// sessionEvents collects the server's events until the connected
// clients have all left. They have closed by now, so their goodbyes are
// at most one trip through the relay away (or, if all were lost, the
// server times them out).
func sessionEvents(ctx context.Context, l *session.Listener, connected int) sessionTally {
	t := sessionTally{reasons: map[string]int{}}
	for t.disconnects < connected {
		ev, err := l.NextEvent(ctx)
		if err != nil {
			t.err = err
			break
		}
		switch ev.Kind {
		case session.EventConnected:
			t.connects++
		case session.EventDisconnected:
			t.disconnects++
			name := sessionReason(ev.Reason)
			if t.reasons[name] == 0 {
				t.order = append(t.order, name)
			}
			t.reasons[name]++
		}
	}
	return t
}

// sessionReason names why a client left.
func sessionReason(err error) string {
	switch {
	case err == nil:
		return "closed by the server"
	case errors.Is(err, session.ErrPeerClosed):
		return "client disconnected"
	case errors.Is(err, session.ErrTimedOut):
		return "timed out"
	}
	return err.Error()
}

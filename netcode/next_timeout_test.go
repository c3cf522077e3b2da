package netcode

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// timedCore is what the NextTimeout tests drive: a Client or a Server.
type timedCore interface {
	Receive(pkt []byte, from netip.AddrPort, now time.Time)
	Update(now time.Time)
	NextTimeout() time.Time
	Outgoing() []Datagram
	advance(now time.Time)
}

var (
	_ timedCore = (*Client)(nil)
	_ timedCore = (*Server)(nil)
)

var shortPacketNames = [numPacketTypes]string{"request", "denied", "challenge", "response", "keep-alive", "payload", "disconnect"}

// packetName reads a datagram's type from its first byte, which is in the
// clear for every packet type.
func packetName(d []byte) string {
	if len(d) == 0 || PacketType(d[0]&0x0f) >= numPacketTypes {
		return "?"
	}
	return shortPacketNames[d[0]&0x0f]
}

// describeOutgoing names each datagram by type and destination, with runs
// of the same one counted ("10×disconnect→a").
func describeOutgoing(ds []Datagram, names map[netip.AddrPort]string) []string {
	var out []string
	last, run := "", 0
	flush := func() {
		switch {
		case run == 1:
			out = append(out, last)
		case run > 1:
			out = append(out, fmt.Sprintf("%d×%s", run, last))
		}
	}
	for _, d := range ds {
		s := packetName(d.Data)
		if n, ok := names[d.Addr]; ok {
			s += "→" + n
		}
		if s != last {
			flush()
			last, run = s, 0
		}
		run++
	}
	flush()
	return out
}

// clientWatch reports what a client did since it was last asked: the
// datagrams it queued and a change of state.
type clientWatch struct {
	c     *Client
	names map[netip.AddrPort]string
	state ClientState
}

func (w *clientWatch) changes() string {
	out := describeOutgoing(w.c.Outgoing(), w.names)
	if st := w.c.State(); st != w.state {
		out = append(out, "state "+st.String())
		w.state = st
	}
	return strings.Join(out, ", ")
}

// serverWatch reports what a server did since it was last asked: the
// datagrams it queued, its events, and a change in the number of pending
// handshakes, which is all the mapping sweep changes.
type serverWatch struct {
	s        *Server
	names    map[netip.AddrPort]string
	mappings int
}

func (w *serverWatch) changes() string {
	out := describeOutgoing(w.s.Outgoing(), w.names)
	for _, e := range w.s.Events() {
		s := e.Kind.String() + " " + w.names[e.Address]
		if e.Kind == EventDisconnected {
			s += " (" + e.Reason.String() + ")"
		}
		out = append(out, s)
	}
	if n := len(w.s.mappings); n != w.mappings {
		out = append(out, fmt.Sprintf("mappings %d→%d", w.mappings, n))
		w.mappings = n
	}
	return strings.Join(out, ", ")
}

// jumpTimeline drives core by NextTimeout alone, from one deadline to the
// next until there is none, and returns what each Update at a deadline
// did, as "offset from start: changes". At every deadline it first checks
// that an Update one nanosecond earlier does nothing observable and leaves
// the deadline where it was: the deadline is neither late nor early.
func jumpTimeline(t *testing.T, start time.Time, core timedCore, changes func() string) []string {
	t.Helper()
	if c := changes(); c != "" {
		t.Fatalf("unobserved changes before the first deadline: %s", c)
	}
	var got []string
	last := start
	for range 1000 {
		next := core.NextTimeout()
		if next.IsZero() {
			return got
		}
		if !next.After(last) {
			t.Fatalf("NextTimeout %v is not after the Update at %v", next.Sub(start), last.Sub(start))
		}
		core.Update(next.Add(-time.Nanosecond))
		if c := changes(); c != "" {
			t.Fatalf("Update 1 ns before NextTimeout (%v) did: %s", next.Sub(start), c)
		}
		if again := core.NextTimeout(); !again.Equal(next) {
			t.Fatalf("an Update that did nothing moved NextTimeout from %v to %v", next.Sub(start), again.Sub(start))
		}
		core.Update(next)
		c := changes()
		if c == "" {
			c = "nothing"
		}
		got = append(got, fmt.Sprintf("%v: %s", next.Sub(start), c))
		last = next
	}
	t.Fatal("still scheduling after 1000 deadlines")
	return nil
}

// every returns "offset: what" for offsets from first to last, step apart.
func every(first, last, step time.Duration, what string) []string {
	var out []string
	for d := first; d <= last; d += step {
		out = append(out, fmt.Sprintf("%v: %s", d, what))
	}
	return out
}

func lines(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			out = append(out, p)
		case []string:
			out = append(out, p...)
		}
	}
	return out
}

func checkTimeline(t *testing.T, got, want []string) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("timeline (-want +got):\n%s", diff)
	}
}

// handshake runs a client through the handshake with a sans-I/O server at
// now, delivering everything at once.
func handshake(t *testing.T, s *Server, c *Client, caddr netip.AddrPort, now time.Time) {
	t.Helper()
	for range 3 {
		for _, d := range c.Outgoing() {
			s.Receive(bytes.Clone(d.Data), caddr, now)
		}
		for _, d := range s.Outgoing() {
			c.Receive(bytes.Clone(d.Data), s.cfg.PublicAddress, now)
		}
	}
	if c.State() != ClientConnected {
		t.Fatalf("handshake ended in %v", c.State())
	}
}

// TestClientNextTimeout drives clients in every timed state by NextTimeout
// alone: each request, response, keep-alive, timeout and token expiry
// happens exactly at the NextTimeout before it, nothing happens a
// nanosecond earlier, and NextTimeout is zero once the client has stopped.
func TestClientNextTimeout(t *testing.T) {
	s1, s2 := netip.MustParseAddrPort(addrS1), netip.MustParseAddrPort(addrS2)
	names := map[netip.AddrPort]string{s1: "s1", s2: "s2"}
	caddr := netip.MustParseAddrPort(addrC1)

	t.Run("requests then request timeout", func(t *testing.T) {
		p := newPair(t)
		c := p.client(addrC1, ClientConfig{})
		if err := c.Connect(p.token(1, nil, addrS1), p.now); err != nil {
			t.Fatal(err)
		}
		w := &clientWatch{c: c, state: c.State()}
		if got := describeOutgoing(c.Outgoing(), nil); len(got) != 1 || got[0] != "request" {
			t.Fatalf("Connect queued %v", got)
		}
		checkTimeline(t, jumpTimeline(t, p.now, c, w.changes), lines(
			every(100*time.Millisecond, 4900*time.Millisecond, 100*time.Millisecond, "request"),
			"5s: state connection request timed out",
		))
	})

	t.Run("fail-over to the next server", func(t *testing.T) {
		p := newPair(t)
		c := p.client(addrC1, ClientConfig{})
		if err := c.Connect(p.token(1, nil, addrS1, addrS2), p.now); err != nil {
			t.Fatal(err)
		}
		w := &clientWatch{c: c, names: names, state: c.State()}
		c.Outgoing()
		checkTimeline(t, jumpTimeline(t, p.now, c, w.changes), lines(
			every(100*time.Millisecond, 4900*time.Millisecond, 100*time.Millisecond, "request→s1"),
			"5s: request→s2",
			every(5100*time.Millisecond, 9900*time.Millisecond, 100*time.Millisecond, "request→s2"),
			"10s: state connection request timed out",
		))
	})

	// challenged returns a client that got its challenge 40 ms after
	// connecting, from a server that then goes quiet, and the connect time.
	// Its responses are due 40 ms off the whole seconds at which its
	// timeout or token expiry falls.
	challenged := func(t *testing.T, mod func(*TokenParams)) (*Client, time.Time) {
		p := newPair(t)
		// A short MaxTokenLifetime, so that the restart rule lets a
		// short-lived token through a server started this instant.
		s := p.server(addrS1, ServerConfig{MaxTokenLifetime: time.Second})
		c := p.client(addrC1, ClientConfig{})
		if err := c.Connect(p.token(1, mod, addrS1), p.now); err != nil {
			t.Fatal(err)
		}
		for _, d := range c.Outgoing() {
			s.Receive(bytes.Clone(d.Data), caddr, p.now)
		}
		start := p.now
		p.now = p.now.Add(40 * time.Millisecond)
		for _, d := range s.Outgoing() {
			c.Receive(bytes.Clone(d.Data), s1, p.now)
		}
		if got := describeOutgoing(c.Outgoing(), nil); len(got) != 1 || got[0] != "response" {
			t.Fatalf("the challenge was answered with %v", got)
		}
		return c, start
	}

	t.Run("responses then response timeout", func(t *testing.T) {
		c, start := challenged(t, func(tp *TokenParams) { tp.Timeout = 3 * time.Second })
		w := &clientWatch{c: c, state: c.State()}
		checkTimeline(t, jumpTimeline(t, start, c, w.changes), lines(
			every(140*time.Millisecond, 2940*time.Millisecond, 100*time.Millisecond, "response"),
			"3.04s: state connection response timed out",
		))
	})

	t.Run("token expires before the timeout", func(t *testing.T) {
		c, start := challenged(t, func(tp *TokenParams) { tp.Expiry = 3 * time.Second; tp.Timeout = 10 * time.Second })
		w := &clientWatch{c: c, state: c.State()}
		checkTimeline(t, jumpTimeline(t, start, c, w.changes), lines(
			every(140*time.Millisecond, 2940*time.Millisecond, 100*time.Millisecond, "response"),
			"3s: state connect token expired",
		))
	})

	t.Run("keep-alives then timeout", func(t *testing.T) {
		p := newPair(t)
		s := p.server(addrS1, ServerConfig{})
		c := p.client(addrC1, ClientConfig{})
		if err := c.Connect(p.token(1, nil, addrS1), p.now); err != nil {
			t.Fatal(err)
		}
		handshake(t, s, c, caddr, p.now)
		start := p.now
		// A keep-alive from the server arrives 2.33 s in and moves the
		// timeout off the 100 ms grid of keep-alives; a payload sent 2.45 s
		// in moves the next keep-alive.
		s.Update(start.Add(KeepAliveInterval))
		var ka []byte
		for _, d := range s.Outgoing() {
			ka = bytes.Clone(d.Data)
		}
		if packetName(ka) != "keep-alive" {
			t.Fatalf("server sent %q", packetName(ka))
		}
		w := &clientWatch{c: c, state: c.State()}
		got := jumpUntil(t, start, c, w.changes, start.Add(2330*time.Millisecond))
		c.Receive(ka, s1, start.Add(2330*time.Millisecond))
		got = append(got, jumpUntil(t, start, c, w.changes, start.Add(2450*time.Millisecond))...)
		c.advance(start.Add(2450 * time.Millisecond))
		if err := c.SendPayload([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if c := w.changes(); c != "payload" {
			t.Fatalf("SendPayload queued %q", c)
		}
		got = append(got, jumpTimeline(t, start, c, w.changes)...)
		checkTimeline(t, got, lines(
			every(100*time.Millisecond, 2400*time.Millisecond, 100*time.Millisecond, "keep-alive"),
			every(2550*time.Millisecond, 7250*time.Millisecond, 100*time.Millisecond, "keep-alive"),
			"7.33s: state connection timed out",
		))
	})
}

// jumpUntil is jumpTimeline stopped before the first deadline at or after
// end, for a test that wants to hand the core something at end.
func jumpUntil(t *testing.T, start time.Time, core timedCore, changes func() string, end time.Time) []string {
	t.Helper()
	var got []string
	for {
		next := core.NextTimeout()
		if next.IsZero() || !next.Before(end) {
			return got
		}
		core.Update(next.Add(-time.Nanosecond))
		if c := changes(); c != "" {
			t.Fatalf("Update 1 ns before NextTimeout (%v) did: %s", next.Sub(start), c)
		}
		core.Update(next)
		c := changes()
		if c == "" {
			c = "nothing"
		}
		got = append(got, fmt.Sprintf("%v: %s", next.Sub(start), c))
	}
}

// TestServerNextTimeout does the same for a server: keep-alives to each
// client, timeouts, and the sweep of pending handshakes.
func TestServerNextTimeout(t *testing.T) {
	t.Run("keep-alives and timeouts of two clients", func(t *testing.T) {
		h := newServerHarness(t, ServerConfig{})
		start := h.now
		a := h.client("198.51.100.7:5000")
		a.connect()
		// b connects 50 ms later with a shorter timeout, so the two
		// clients' deadlines interleave and b's timeout comes first.
		h.advance(50 * time.Millisecond)
		bp := h.tokenParams(netip.AddrPort{})
		bp.Timeout = 2 * time.Second
		b := h.clientWith("198.51.100.8:5000", bp)
		b.connect()
		h.s.Events()
		w := &serverWatch{s: h.s, names: map[netip.AddrPort]string{a.addr: "a", b.addr: "b"}}
		var want []string
		for ms := 100; ms <= 5000; ms += 50 {
			switch {
			case ms%100 == 0 && ms == 5000:
				want = append(want, "5s: keep-alive→a, 10×disconnect→a, disconnected a (timed out)")
			case ms%100 == 0:
				want = append(want, fmt.Sprintf("%v: keep-alive→a", time.Duration(ms)*time.Millisecond))
			case ms == 2050:
				want = append(want, "2.05s: keep-alive→b, 10×disconnect→b, disconnected b (timed out)")
			case ms < 2050:
				want = append(want, fmt.Sprintf("%v: keep-alive→b", time.Duration(ms)*time.Millisecond))
			}
		}
		checkTimeline(t, jumpTimeline(t, start, h.s, w.changes), want)
	})

	t.Run("payload traffic delays keep-alives", func(t *testing.T) {
		h := newServerHarness(t, ServerConfig{})
		start := h.now
		a := h.client("198.51.100.7:5000")
		i := a.connect()
		h.s.Events()
		w := &serverWatch{s: h.s, names: map[netip.AddrPort]string{a.addr: "a"}}
		got := jumpUntil(t, start, h.s, w.changes, start.Add(250*time.Millisecond))
		h.s.advance(start.Add(250 * time.Millisecond))
		if err := h.s.SendPayload(i, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if c := w.changes(); c != "keep-alive→a, payload→a" {
			t.Fatalf("SendPayload queued %q", c)
		}
		// The payload moved a's keep-alive from 300 to 350 ms, but only an
		// Update rescans the slots: until then NextTimeout stays early, at
		// 300 ms, where Update finds nothing to do.
		if next := h.s.NextTimeout(); !next.Equal(start.Add(300 * time.Millisecond)) {
			t.Fatalf("NextTimeout after a payload is %v in, want 300ms", next.Sub(start))
		}
		got = append(got, jumpUntil(t, start, h.s, w.changes, start.Add(time.Second))...)
		h.now = start.Add(time.Second)
		a.deliver(a.seal(Packet{Type: ConnectionKeepAlive})) // the timeout moves to 6 s
		got = append(got, jumpTimeline(t, start, h.s, w.changes)...)
		checkTimeline(t, got, lines(
			every(100*time.Millisecond, 200*time.Millisecond, 100*time.Millisecond, "keep-alive→a"),
			"300ms: nothing",
			every(350*time.Millisecond, 5950*time.Millisecond, 100*time.Millisecond, "keep-alive→a"),
			"6s: 10×disconnect→a, disconnected a (timed out)",
		))
	})

	t.Run("pending handshake is swept", func(t *testing.T) {
		h := newServerHarness(t, ServerConfig{})
		start := h.now
		if next := h.s.NextTimeout(); !next.IsZero() {
			t.Fatalf("idle server: NextTimeout %v", next)
		}
		h.advance(300 * time.Millisecond)
		a := h.client("198.51.100.7:5000")
		a.challenge() // and never answers: a mapping that expires 5.3 s in
		w := &serverWatch{s: h.s, names: map[netip.AddrPort]string{a.addr: "a"}, mappings: 1}
		checkTimeline(t, jumpTimeline(t, start, h.s, w.changes), []string{
			"1s: nothing", "2s: nothing", "3s: nothing", "4s: nothing", "5s: nothing",
			"6s: mappings 1→0",
		})
	})

	t.Run("a new client brings NextTimeout forward", func(t *testing.T) {
		h := newServerHarness(t, ServerConfig{})
		h.advance(2500 * time.Millisecond)
		h.s.Update(h.now) // sweeps the empty table; the next sweep is at 3.5 s
		if next := h.s.NextTimeout(); !next.IsZero() {
			t.Fatalf("idle server: NextTimeout %v", next.Sub(testEpoch))
		}
		a := h.client("198.51.100.7:5000")
		a.challenge()
		// The pending handshake needs only the sweep.
		if next := h.s.NextTimeout(); !next.Equal(testEpoch.Add(3500 * time.Millisecond)) {
			t.Fatalf("pending handshake: NextTimeout %v, want 3.5s", next.Sub(testEpoch))
		}
		h.advance(10 * time.Millisecond)
		a.deliver(a.responsePacket())
		a.expect(ConnectionKeepAlive)
		if next, want := h.s.NextTimeout(), h.now.Add(KeepAliveInterval); !next.Equal(want) {
			t.Fatalf("after connecting: NextTimeout %v, want %v", next.Sub(testEpoch), want.Sub(testEpoch))
		}
	})

	t.Run("disconnecting leaves an early NextTimeout, which one Update corrects", func(t *testing.T) {
		h := newServerHarness(t, ServerConfig{})
		a := h.client("198.51.100.7:5000")
		ia := a.connect()
		h.advance(50 * time.Millisecond)
		b := h.client("198.51.100.8:5000")
		ib := b.connect()
		h.s.Events()
		if err := h.s.DisconnectClient(ia); err != nil {
			t.Fatal(err)
		}
		h.outgoing()
		h.s.Events()
		// a's deadline, 100 ms in, is early now: Update then does nothing.
		early := h.s.NextTimeout()
		if !early.Equal(testEpoch.Add(100 * time.Millisecond)) {
			t.Fatalf("NextTimeout %v", early.Sub(testEpoch))
		}
		h.s.Update(early)
		if out := h.outgoing(); len(out) != 0 {
			t.Fatalf("Update at the stale deadline sent %d datagrams", len(out))
		}
		if next := h.s.NextTimeout(); !next.Equal(testEpoch.Add(150 * time.Millisecond)) {
			t.Fatalf("after Update: NextTimeout %v, want b's keep-alive at 150ms", next.Sub(testEpoch))
		}
		if err := h.s.DisconnectClient(ib); err != nil {
			t.Fatal(err)
		}
		if next := h.s.NextTimeout(); !next.IsZero() {
			t.Fatalf("no clients left: NextTimeout %v", next.Sub(testEpoch))
		}
	})
}

// TestNextTimeoutZeroWhenIdle: a core with nothing to time says so.
func TestNextTimeoutZeroWhenIdle(t *testing.T) {
	p := newPair(t)
	idle := p.client(addrC1, ClientConfig{})
	invalid := p.client(addrC2, ClientConfig{})
	invalid.Connect(make([]byte, ConnectTokenBytes), p.now)

	s := p.server(addrS1, ServerConfig{})
	left := p.client("198.51.100.3:5000", ClientConfig{})
	left.Connect(p.token(3, nil, addrS1), p.now)
	p.flush()
	left.Disconnect(p.now)
	timedOut := p.client("198.51.100.4:5000", ClientConfig{})
	timedOut.Connect(p.token(4, func(tp *TokenParams) { tp.Timeout = time.Second }, "203.0.113.9:40000"), p.now)
	timedOut.Update(p.now.Add(time.Second))
	p.flush()

	stopped, err := NewServer(ServerConfig{PublicAddress: testServerAddr})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		core timedCore
		want ClientState
	}{
		{"new client", idle, ClientDisconnected},
		{"invalid token", invalid, ClientInvalidConnectToken},
		{"disconnected client", left, ClientDisconnected},
		{"timed-out client", timedOut, ClientConnectionRequestTimedOut},
		{"server never started", stopped, 0},
	} {
		if c, ok := tc.core.(*Client); ok && c.State() != tc.want {
			t.Errorf("%s: state %v, want %v", tc.name, c.State(), tc.want)
		}
		if next := tc.core.NextTimeout(); !next.IsZero() {
			t.Errorf("%s: NextTimeout %v, want zero", tc.name, next)
		}
	}

	// The server the disconnected client left: no handshake pending, no
	// client connected.
	if s.ConnectedClients() != 0 {
		t.Fatalf("%d clients still connected", s.ConnectedClients())
	}
	if next := s.NextTimeout(); !next.IsZero() {
		t.Errorf("started server without clients: NextTimeout %v, want zero", next)
	}
	// Stopped with a client connected: zero too, although Stop queued the
	// client's disconnect packets.
	again := p.client("198.51.100.5:5000", ClientConfig{})
	again.Connect(p.token(5, nil, addrS1), p.now)
	p.flush()
	if s.ConnectedClients() != 1 || s.NextTimeout().IsZero() {
		t.Fatalf("%d clients, NextTimeout %v", s.ConnectedClients(), s.NextTimeout())
	}
	s.Stop(p.now)
	if next := s.NextTimeout(); !next.IsZero() {
		t.Errorf("stopped server: NextTimeout %v, want zero", next)
	}
}

// traceNet is a deterministic network for sans-I/O cores with a fixed
// latency per sender, recording every datagram sent and every change of
// state, so that two ways of driving the same scenario can be compared.
type traceNet struct {
	t       *testing.T
	start   time.Time
	server  *Server
	clients []*Client
	addrs   map[timedCore]netip.AddrPort
	names   map[netip.AddrPort]string
	latency map[netip.AddrPort]time.Duration
	cut     map[netip.AddrPort]bool // datagrams from or to it are lost
	flight  []traceDatagram
	states  []ClientState
	trace   []string
	steps   int
}

type traceDatagram struct {
	at       time.Time
	from, to netip.AddrPort
	data     []byte
}

// traceAction is something the application does at a time.
type traceAction struct {
	at time.Duration
	do func(n *traceNet, now time.Time)
}

func newTraceNet(t *testing.T) *traceNet {
	n := &traceNet{t: t, start: testEpoch, addrs: map[timedCore]netip.AddrPort{},
		names: map[netip.AddrPort]string{}, latency: map[netip.AddrPort]time.Duration{}, cut: map[netip.AddrPort]bool{}}
	s, err := NewServer(ServerConfig{ProtocolID: testProtocolID, PrivateKey: testServerKey, PublicAddress: netip.MustParseAddrPort(addrS1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(n.start); err != nil {
		t.Fatal(err)
	}
	n.server = s
	n.names[netip.MustParseAddrPort(traceNobody)] = "x"
	n.addrs[s], n.names[s.cfg.PublicAddress], n.latency[s.cfg.PublicAddress] = s.cfg.PublicAddress, "s", 4*time.Millisecond
	for i, lat := range []time.Duration{3 * time.Millisecond, 11 * time.Millisecond, 2 * time.Millisecond} {
		c, err := NewClient(ClientConfig{ProtocolID: testProtocolID})
		if err != nil {
			t.Fatal(err)
		}
		a := netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 51, 100, byte(10 + i)}), 5000)
		n.clients = append(n.clients, c)
		n.states = append(n.states, c.State())
		n.addrs[c], n.names[a], n.latency[a] = a, string(rune('a'+i)), lat
	}
	return n
}

func (n *traceNet) cores() []timedCore {
	cs := []timedCore{n.server}
	for _, c := range n.clients {
		cs = append(cs, c)
	}
	return cs
}

func (n *traceNet) token(id uint64, timeout time.Duration, server string) []byte {
	p := &TokenParams{ClientID: id, ProtocolID: testProtocolID, PrivateKey: testServerKey, Now: n.start, Timeout: timeout,
		PublicAddresses: []netip.AddrPort{netip.MustParseAddrPort(server)}}
	b, err := GenerateConnectToken(p)
	if err != nil {
		n.t.Fatal(err)
	}
	return b
}

func (n *traceNet) record(now time.Time, format string, args ...any) {
	n.trace = append(n.trace, fmt.Sprintf("%v ", now.Sub(n.start))+fmt.Sprintf(format, args...))
}

// step runs one instant: deliveries due, then Update for the cores update
// says to, then the application's actions, then sending.
func (n *traceNet) step(now time.Time, update func(timedCore) bool, actions []traceAction) {
	n.steps++
	rest := n.flight[:0]
	var due []traceDatagram
	for _, d := range n.flight {
		if d.at.Equal(now) {
			due = append(due, d)
		} else {
			rest = append(rest, d)
		}
	}
	n.flight = rest
	for _, d := range due {
		for _, c := range n.cores() {
			if n.addrs[c] == d.to {
				c.Receive(d.data, d.from, now)
			}
		}
	}
	for _, c := range n.cores() {
		if update(c) {
			c.Update(now)
		}
	}
	for _, a := range actions {
		if n.start.Add(a.at).Equal(now) {
			a.do(n, now)
		}
	}
	for _, c := range n.cores() {
		from := n.addrs[c]
		for _, d := range c.Outgoing() {
			n.record(now, "%s→%s %s", n.names[from], n.names[d.Addr], packetName(d.Data))
			if !n.cut[from] && !n.cut[d.Addr] {
				n.flight = append(n.flight, traceDatagram{at: now.Add(n.latency[from]), from: from, to: d.Addr, data: bytes.Clone(d.Data)})
			}
		}
	}
	for i, c := range n.clients {
		if st := c.State(); st != n.states[i] {
			n.record(now, "%s %v", n.names[n.addrs[c]], st)
			n.states[i] = st
		}
	}
	for _, e := range n.server.Events() {
		n.record(now, "s %v %s (%v)", e.Kind, n.names[e.Address], e.Reason)
	}
}

// traceScenario: three clients. a connects and trades payloads, then idles
// on keep-alives; b connects, is cut off and times out on both ends; c
// dials an address nobody serves, resends its request and times out; a
// finally disconnects.
func traceScenario() []traceAction {
	payload := func(client int, text string) func(*traceNet, time.Time) {
		return func(n *traceNet, now time.Time) {
			c := n.clients[client]
			c.advance(now)
			if err := c.SendPayload([]byte(text)); err != nil {
				n.t.Fatalf("%v: client %d SendPayload: %v", now.Sub(n.start), client, err)
			}
		}
	}
	toClient := func(id uint64, text string) func(*traceNet, time.Time) {
		return func(n *traceNet, now time.Time) {
			i, ok := n.server.ClientIndex(id)
			if !ok {
				n.t.Fatalf("%v: client %d not connected", now.Sub(n.start), id)
			}
			n.server.advance(now)
			if err := n.server.SendPayload(i, []byte(text)); err != nil {
				n.t.Fatal(err)
			}
		}
	}
	connect := func(client int, id uint64, timeout time.Duration, server string) func(*traceNet, time.Time) {
		return func(n *traceNet, now time.Time) {
			if err := n.clients[client].Connect(n.token(id, timeout, server), now); err != nil {
				n.t.Fatal(err)
			}
		}
	}
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	actions := []traceAction{
		{ms(10), connect(0, 1, 5*time.Second, addrS1)},
		{ms(37), connect(1, 2, 3*time.Second, addrS1)},
		{ms(1003), connect(2, 3, 4*time.Second, traceNobody)},
		{ms(2000), func(n *traceNet, _ time.Time) { n.cut[n.addrs[n.clients[1]]] = true }},
		{ms(9000), func(n *traceNet, now time.Time) { n.clients[0].Disconnect(now) }},
	}
	for at := 400; at < 1400; at += 73 {
		actions = append(actions, traceAction{ms(at), payload(0, "up")})
	}
	for at := 420; at < 2600; at += 130 {
		actions = append(actions, traceAction{ms(at), toClient(1, "down")})
	}
	actions = append(actions, traceAction{ms(1500), payload(1, "b up")}, traceAction{ms(1777), toClient(2, "to b")})
	return actions
}

const (
	traceEnd    = 10 * time.Second
	traceNobody = "203.0.113.99:40000" // no server there
)

// TestNextTimeoutDrivesLikeAFixedTick runs the same scenario twice: once
// updating every core every millisecond, once updating a core only when
// its NextTimeout has come, with the clock jumping from one NextTimeout,
// delivery or application action to the next. Every time is a whole
// millisecond, so the fixed tick is as good as continuous Update; the
// jumping run must send the same packets at the same times and see the
// same state changes, with far fewer steps.
func TestNextTimeoutDrivesLikeAFixedTick(t *testing.T) {
	actions := traceScenario()
	end := testEpoch.Add(traceEnd)

	ticked := newTraceNet(t)
	for now := ticked.start; !now.After(end); now = now.Add(time.Millisecond) {
		ticked.step(now, func(timedCore) bool { return true }, actions)
	}

	jumped := newTraceNet(t)
	for now := jumped.start; !now.After(end); {
		jumped.step(now, func(c timedCore) bool {
			next := c.NextTimeout()
			return !next.IsZero() && !now.Before(next)
		}, actions)
		var next time.Time
		for _, c := range jumped.cores() {
			if nt := c.NextTimeout(); !nt.IsZero() {
				if !nt.After(now) {
					t.Fatalf("%v: %s's NextTimeout %v is not after the step that ran it", now.Sub(jumped.start), jumped.names[jumped.addrs[c]], nt.Sub(jumped.start))
				}
				next = earliest(next, nt)
			}
		}
		for _, d := range jumped.flight {
			next = earliest(next, d.at)
		}
		for _, a := range actions {
			if at := jumped.start.Add(a.at); at.After(now) {
				next = earliest(next, at)
			}
		}
		if next.IsZero() {
			break
		}
		now = next
	}

	if diff := cmp.Diff(ticked.trace, jumped.trace); diff != "" {
		t.Fatalf("trace driven by NextTimeout differs from the 1 ms tick (-tick +NextTimeout):\n%s", diff)
	}
	if ticked.server.Stats() != jumped.server.Stats() {
		t.Fatalf("server stats differ:\ntick %+v\njump %+v", ticked.server.Stats(), jumped.server.Stats())
	}
	for i := range ticked.clients {
		if ticked.clients[i].Stats() != jumped.clients[i].Stats() {
			t.Fatalf("client %d stats differ:\ntick %+v\njump %+v", i, ticked.clients[i].Stats(), jumped.clients[i].Stats())
		}
	}
	// The scenario did what it is for.
	for _, want := range []string{
		"a connected", "b connected", "s connected a (none)", "s connected b (none)",
		"b connection timed out", "s disconnected b (timed out)", "c connection request timed out",
		"s disconnected a (client disconnected)", "s→a keep-alive", "a→s keep-alive", "c→x request",
	} {
		if !slices.ContainsFunc(jumped.trace, func(l string) bool { return strings.HasSuffix(l, want) }) {
			t.Errorf("trace has no %q", want)
		}
	}
	if jumped.steps*10 > ticked.steps {
		t.Errorf("NextTimeout took %d steps, the tick %d", jumped.steps, ticked.steps)
	}
	if testing.Verbose() {
		t.Log(strings.Join(jumped.trace, "\n"))
	}
	t.Logf("%d trace lines; %d steps by NextTimeout, %d by the tick", len(jumped.trace), jumped.steps, ticked.steps)
}

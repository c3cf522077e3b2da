package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/internal/driver"
	"github.com/netrak/netrak/internal/endpoint"
	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/transport"
)

// EventKind says what happened to a client slot: netcode's kinds, since
// a session's slots are netcode's.
type EventKind = netcode.EventKind

// Event kinds.
const (
	EventConnected    = netcode.EventConnected
	EventDisconnected = netcode.EventDisconnected
)

// Event reports a client connecting or disconnecting.
type Event struct {
	Kind        EventKind
	ClientIndex int
	ClientID    uint64
	Address     netip.AddrPort
	// Loopback marks a client connected with ConnectLoopback.
	Loopback bool
	// Reason is why a client disconnected: nil after a Close on the
	// server's side, else ErrPeerClosed, ErrTimedOut, ErrConnectionLost,
	// ErrBacklogFull or ErrServerClosed.
	Reason error
}

// maxEvents bounds the events waiting for NextEvent; the oldest go first.
func maxEvents(slots int) int { return 4*slots + 64 }

// Listener is a session server: a netcode server whose every client slot
// carries a reliability engine. One goroutine reads the socket and one
// runs every timer (netcode's keep-alives and timeouts, each engine's
// resends and ACKs) at the earliest deadline, under one lock. It
// implements net.Listener.
type Listener struct {
	cfg  ServerConfig
	tc   transport.Conn
	log  zerolog.Logger
	loop *driver.Loop
	srvH *driver.Handle

	guard    // mu guards everything below and every Conn's state
	srv      *netcode.Server
	conns    []*Conn
	byAddr   map[netip.AddrPort]int
	closed   bool
	closing  bool // Close has begun: no new loopback clients
	events   []Event
	lastTick time.Time

	backlog   *endpoint.Backlog[*Conn]
	eventCh   chan struct{}
	readDone  chan struct{}
	closeOnce sync.Once
}

var _ net.Listener = (*Listener)(nil)

// ListenUDP opens a UDP socket on address ("host:port"; network "udp",
// "udp4" or "udp6") and serves sessions on it. See Listen.
func ListenUDP(network, address string, cfg ServerConfig) (*Listener, error) {
	uc, err := transport.ListenUDP(network, address, transport.UDPConfig{Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("session: listen: %w", err)
	}
	return Listen(uc, cfg)
}

// Listen serves sessions on conn, which the Listener owns from then on:
// it is closed when Listen fails and by Close. A zero
// cfg.Netcode.PublicAddress means conn.LocalAddr(), which works only if
// connect tokens name that address (not a wildcard one).
func Listen(conn transport.Conn, cfg ServerConfig) (*Listener, error) {
	l, err := newListener(conn, cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return l, nil
}

func newListener(conn transport.Conn, cfg ServerConfig) (*Listener, error) {
	nc := &cfg.Netcode
	if !nc.PublicAddress.IsValid() {
		nc.PublicAddress = conn.LocalAddr()
		if nc.PublicAddress.Addr().IsUnspecified() {
			return nil, errors.New("session: ServerConfig.Netcode.PublicAddress is required when bound to a wildcard address")
		}
	}
	if nc.MaxClients > MaxClients {
		return nil, fmt.Errorf("session: MaxClients %d above %d", nc.MaxClients, MaxClients)
	}
	nc.Logger = cfg.Logger
	cfg.defaults()
	if cfg.AcceptBacklog <= 0 {
		cfg.AcceptBacklog = DefaultAcceptBacklog
	}
	srv, err := netcode.NewServer(*nc)
	if err != nil {
		return nil, err
	}
	if _, err := newCore(&cfg.ConnConfig, cfg.Logger, time.Now()); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if err := srv.Start(time.Now()); err != nil {
		return nil, err
	}
	l := &Listener{
		cfg: cfg, tc: conn, log: cfg.Logger, srv: srv,
		conns:    make([]*Conn, srv.MaxClients()),
		byAddr:   make(map[netip.AddrPort]int),
		loop:     driver.NewLoop(),
		eventCh:  make(chan struct{}, 1),
		readDone: make(chan struct{}),
	}
	l.backlog = endpoint.NewBacklog[*Conn](cfg.AcceptBacklog, "session", l.Addr())
	l.srvH = l.loop.Add(serverTask{l})
	l.srvH.WakeBy(time.Now())
	go l.read()
	return l, nil
}

// minUpdateGap spaces the netcode server's Update runs: each scans every
// slot, and with thousands of clients the keep-alive and timeout
// deadlines fall at all times. Keep-alives and timeouts are then at most
// this late, as with a reference server ticking at 200 Hz.
const minUpdateGap = 5 * time.Millisecond

// serverTask runs the netcode server's timers on the loop.
type serverTask struct{ l *Listener }

func (t serverTask) Run(now time.Time) time.Time {
	l := t.l
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return time.Time{}
	}
	l.srv.Update(now)
	l.lastTick = now
	l.afterServerLocked(now)
	next := l.nextUpdateLocked()
	l.unlockAndSettle()
	return next
}

func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// read is the reader goroutine.
func (l *Listener) read() {
	defer close(l.readDone)
	r := driver.Reader{Conn: l.tc, Stop: l.backlog.Done(), Handle: l.receive}
	if err := r.Run(); err != nil {
		l.log.Warn().Err(err).Msg("session: server giving up on its socket")
		l.backlog.Close(err) // before shutdown, so that Accept reports why
		go l.shutdown(err)
	}
}

// receive handles one datagram from the socket.
func (l *Listener) receive(b []byte, from netip.AddrPort) {
	now := time.Now()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.srv.Receive(b, from, now)
	if i, ok := l.byAddr[from]; ok {
		l.deliverLocked(i, now)
	}
	l.afterServerLocked(now)
	next := l.nextUpdateLocked()
	l.unlockAndSettle()
	l.srvH.WakeBy(next)
}

// nextUpdateLocked is when the netcode server's Update must run next:
// its NextTimeout, but no sooner than minUpdateGap after the last run.
func (l *Listener) nextUpdateLocked() time.Time {
	next := l.srv.NextTimeout()
	if next.IsZero() {
		return next
	}
	return later(next, l.lastTick.Add(minUpdateGap))
}

// deliverLocked hands client i's received payloads, each a RakNet
// datagram, to its engine.
func (l *Listener) deliverLocked(i int, now time.Time) {
	c := l.conns[i]
	for {
		p, _, ok := l.srv.ReceivePayload(i)
		if !ok {
			return
		}
		if c == nil {
			continue
		}
		l.later(c, c.ep.StepLocked(now, func(core *endpoint.Core, now time.Time) {
			core.Receive(p, now)
		}))
	}
}

// afterServerLocked sends what the netcode server queued and turns its
// events into connections.
func (l *Listener) afterServerLocked(now time.Time) {
	for _, ev := range l.srv.Events() {
		switch ev.Kind {
		case netcode.EventConnected:
			l.connectedLocked(ev, now)
		case netcode.EventDisconnected:
			l.disconnectedLocked(ev, now)
		}
	}
	l.flushLocked()
}

// flushLocked writes the netcode server's outgoing packets.
func (l *Listener) flushLocked() {
	for _, d := range l.srv.Outgoing() {
		// A lost datagram is not an error for a datagram protocol; a
		// closed socket is noticed by the reader.
		l.tc.WriteTo(d.Data, d.Addr)
	}
}

func (l *Listener) connectedLocked(ev netcode.Event, now time.Time) {
	if ev.Loopback {
		l.loopConnectedLocked(ev, now)
		return
	}
	info, _ := l.srv.Client(ev.ClientIndex)
	core, err := newCore(&l.cfg.ConnConfig, l.log, now)
	if err != nil {
		// The config was checked at Listen; this cannot happen.
		l.srv.DisconnectClient(ev.ClientIndex)
		return
	}
	i := ev.ClientIndex
	c := &Conn{mu: &l.mu, owner: &l.guard, index: i, clientID: ev.ClientID, userData: info.UserData, server: true}
	c.stats = func() Stats { return l.slotStats(i) }
	c.leave = func(time.Time) {
		if l.conns[i] == c {
			l.srv.DisconnectClient(i)
			l.afterServerLocked(time.Now())
		}
	}
	c.ep = endpoint.NewConn(core, endpoint.ConnConfig{
		Net: "session", Local: l.tc.LocalAddr(), Remote: ev.Address, Lock: &l.mu,
		CloseTimeout: l.cfg.CloseTimeout, MaxMessage: l.cfg.maxMessage(),
		Hooks: endpoint.Hooks{
			Emit: func(b []byte) {
				if l.conns[i] == c && l.srv.SendPayload(i, b) == nil {
					l.flushLocked()
				}
			},
			Up:    func() { l.ready(c) },
			Ended: c.ended,
		},
	})
	l.conns[i] = c
	l.byAddr[ev.Address] = i
	c.ep.Start(l.loop)
	l.event(Event{Kind: EventConnected, ClientIndex: i, ClientID: ev.ClientID, Address: ev.Address})
	l.log.Debug().Int("client_index", i).Uint64("client_id", ev.ClientID).Stringer("address", ev.Address).Msg("session: client connected")
	l.later(c, c.ep.StepLocked(now, nil))
}

func (l *Listener) disconnectedLocked(ev netcode.Event, now time.Time) {
	i := ev.ClientIndex
	c := l.conns[i]
	if c == nil {
		return
	}
	if c.loop != nil {
		l.loopDisconnectedLocked(c, ev, now)
		return
	}
	l.conns[i] = nil
	delete(l.byAddr, ev.Address)
	var reason error
	switch ev.Reason {
	case netcode.ReasonTimedOut:
		reason = ErrTimedOut
	case netcode.ReasonClientDisconnected:
		reason = ErrPeerClosed
	case netcode.ReasonServerDisconnected:
		// Our own doing: the Conn ended first (Close, engine death), or
		// the server is shutting down.
		reason = c.ep.Core().Err()
		if !c.ep.Core().Ended() {
			reason = ErrServerClosed
		}
	}
	l.later(c, c.peerLeftLocked(now, reason))
	l.event(Event{Kind: EventDisconnected, ClientIndex: i, ClientID: ev.ClientID, Address: ev.Address, Reason: reason})
	l.log.Debug().Int("client_index", i).Uint64("client_id", ev.ClientID).AnErr("reason", reason).Msg("session: client disconnected")
}

// slotStats reads slot i's netcode counters; mu is held.
func (l *Listener) slotStats(i int) Stats {
	info, ok := l.srv.Client(i)
	if !ok {
		return Stats{}
	}
	st := info.Stats
	return Stats{
		PacketsSent: st.PacketsSent, PacketsReceived: st.PacketsReceived,
		PayloadsSent: st.PayloadsSent, PayloadsReceived: st.PayloadsReceived,
		KeepAlivesSent: st.KeepAlivesSent, KeepAlivesReceived: st.KeepAlivesReceived,
		PacketsDropped: st.Dropped.Total(),
	}
}

func (l *Listener) event(e Event) {
	if over := len(l.events) - maxEvents(len(l.conns)) + 1; over > 0 {
		l.events = append(l.events[:0], l.events[over:]...)
	}
	l.events = append(l.events, e)
	driver.Poke(l.eventCh)
}

// ready hands a new connection to Accept, or drops it when the backlog
// is full.
func (l *Listener) ready(c *Conn) {
	if !l.backlog.Offer(c) {
		l.log.Debug().Int("client_index", c.index).Msg("session: accept backlog full")
		// Abort waits for the loop, which may be what runs this hook.
		go c.ep.Abort(ErrBacklogFull)
	}
}

// Accept waits for the next client. After Close it fails with
// net.ErrClosed, or with an error wrapping ErrTransportFailed if the
// listener closed because reads from its socket kept failing.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.AcceptConn(context.Background())
	if err != nil {
		return nil, err
	}
	return c, nil
}

// AcceptConn is Accept returning the *Conn, and giving up when ctx ends.
func (l *Listener) AcceptConn(ctx context.Context) (*Conn, error) {
	return l.backlog.Accept(ctx)
}

// NextEvent waits for the next connect or disconnect event. At most
// 4×MaxClients+64 events wait; the oldest are dropped past that.
func (l *Listener) NextEvent(ctx context.Context) (Event, error) {
	for {
		l.mu.Lock()
		if len(l.events) > 0 {
			e := l.events[0]
			l.events = l.events[1:]
			if len(l.events) > 0 {
				driver.Poke(l.eventCh)
			}
			l.mu.Unlock()
			return e, nil
		}
		closed := l.closed
		l.mu.Unlock()
		if closed {
			return Event{}, net.ErrClosed
		}
		select {
		case <-l.eventCh:
		case <-l.backlog.Done():
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Close disconnects every client, closing each connection gracefully
// first (up to the close timeout, all at once), and then closes the
// socket. It returns once everything has stopped, the client side of
// every loopback client included, which reads io.EOF after what its
// server side wrote.
func (l *Listener) Close() error {
	l.shutdown(nil)
	return nil
}

func (l *Listener) shutdown(error) {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closing = true
		conns := make([]*Conn, 0, len(l.conns))
		var loopClients []*Conn
		for _, c := range l.conns {
			if c != nil {
				conns = append(conns, c)
				if c.loop != nil {
					loopClients = append(loopClients, c.loop.cli)
				}
			}
		}
		l.mu.Unlock()
		// Connections waiting in the backlog were never accepted; they are
		// in conns too.
		l.backlog.Close(nil)
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.Close()
			}()
		}
		wg.Wait()
		l.mu.Lock()
		l.closed = true
		l.srv.Stop(time.Now()) // disconnect packets for whoever is left
		l.afterServerLocked(time.Now())
		l.mu.Unlock()
		// A loopback client ends when its server side does, and must
		// finish on the loop before the loop stops.
		for _, c := range append(conns, loopClients...) {
			<-c.Done()
		}
		l.loop.Stop()
		l.tc.Close()
		<-l.readDone
		driver.Poke(l.eventCh)
	})
}

// Addr returns the listener's address.
func (l *Listener) Addr() net.Addr { return net.UDPAddrFromAddrPort(l.tc.LocalAddr()) }

// AddrPort returns the listener's address in the form connect tokens and
// ServerConfig take.
func (l *Listener) AddrPort() netip.AddrPort { return l.tc.LocalAddr() }

// ConnectedClients is the number of occupied slots.
func (l *Listener) ConnectedClients() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.srv.ConnectedClients()
}

// ServerStats returns the netcode server's counters.
func (l *Listener) ServerStats() netcode.ServerStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.srv.Stats()
}

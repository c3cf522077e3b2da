package session

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/netrak/netrak/internal/driver"
	"github.com/netrak/netrak/internal/endpoint"
	"github.com/netrak/netrak/netcode"
)

// ErrServerFull is returned by ConnectLoopback when every slot is taken.
var ErrServerFull = errors.New("session: server full")

// maxLoopRounds bounds the exchanges one pump run carries back and forth
// before it lets the loop run other tasks.
const maxLoopRounds = 64

// maxLoopFree bounds the datagram buffers a pair keeps for reuse.
const maxLoopFree = 256

// loopPair joins the two Conns of a loopback client. Each side's engine
// emits datagrams into the other's queue; a pump task on the Listener's
// loop hands them to the other side. Delivering from inside Emit instead
// would re-enter an engine that is still in the middle of its own poll.
// Everything but the pump's handle is guarded by the Listener's lock.
type loopPair struct {
	l        *Listener
	index    int
	srv, cli *Conn
	h        *driver.Handle

	toSrv, toCli loopQueue
	free         [][]byte
	woken        bool // the pump is scheduled
	done         bool // the slot was freed; nothing travels any more
}

// loopQueue holds datagrams for one side, double-buffered so that the
// pump can deliver one batch while the next accumulates.
type loopQueue struct{ dgs, spare [][]byte }

// ConnectLoopback connects a client living in the same process, such as
// the host player of a listen server, in the lowest free slot, with
// netcode's loopback slots (netcode.Server.ConnectLoopbackClient): the
// slot counts in ConnectedClients and reserves clientID, but no packet
// goes through the socket and nothing is encrypted. It returns the client
// side; the server side arrives through Accept like any client, with
// EventConnected marked Loopback.
//
// Both sides are ordinary Conns whose engines exchange datagrams in
// memory, so every reliability, channel and message size behaves as over
// the network. Closing either side is graceful: the other reads io.EOF
// after everything written before. Either way the slot is freed, with
// EventDisconnected. Neither side has netcode counters in Stats.
//
// It fails with ErrServerFull when every slot is taken, with an error
// wrapping netcode.ErrClientIDConnected when clientID is connected, and
// with net.ErrClosed once the Listener is closing.
func (l *Listener) ConnectLoopback(clientID uint64, userData [netcode.UserDataBytes]byte) (*Conn, error) {
	now := time.Now()
	l.mu.Lock()
	if l.closing || l.closed {
		l.mu.Unlock()
		return nil, &net.OpError{Op: "connect loopback", Net: "session", Addr: l.Addr(), Err: net.ErrClosed}
	}
	i := -1
	for k := range l.conns {
		if !l.srv.ClientConnected(k) {
			i = k
			break
		}
	}
	if i < 0 {
		l.mu.Unlock()
		return nil, ErrServerFull
	}
	if err := l.srv.ConnectLoopbackClient(i, clientID, userData); err != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("session: connect loopback: %w", err)
	}
	l.afterServerLocked(now)
	var c *Conn
	if s := l.conns[i]; s != nil && s.loop != nil {
		c = s.loop.cli
	}
	l.unlockAndSettle()
	if c == nil {
		// Only a config newCore refuses gets here, and Listen checked it.
		return nil, errors.New("session: connect loopback: no connection for the slot")
	}
	return c, nil
}

// loopConnectedLocked builds both sides of a loopback slot that netcode
// just reported connected.
func (l *Listener) loopConnectedLocked(ev netcode.Event, now time.Time) {
	i := ev.ClientIndex
	info, _ := l.srv.Client(i)
	sc, err := newCore(&l.cfg.ConnConfig, l.log, now)
	if err != nil {
		l.srv.DisconnectLoopbackClient(i)
		return
	}
	cc, err := newCore(&l.cfg.ConnConfig, l.log, now)
	if err != nil {
		l.srv.DisconnectLoopbackClient(i)
		return
	}
	p := &loopPair{l: l, index: i}
	p.h = l.loop.Add(p)
	s := &Conn{mu: &l.mu, owner: &l.guard, index: i, clientID: ev.ClientID, userData: info.UserData, server: true, loop: p}
	c := &Conn{mu: &l.mu, owner: &l.guard, index: i, clientID: ev.ClientID, userData: info.UserData, loop: p}
	leave := func(now time.Time) {
		if !p.done {
			l.srv.DisconnectLoopbackClient(i)
			l.afterServerLocked(now)
		}
	}
	s.leave, c.leave = leave, leave
	local := l.tc.LocalAddr()
	s.ep = endpoint.NewConn(sc, endpoint.ConnConfig{
		Net: "session", Local: local, Lock: &l.mu,
		CloseTimeout: l.cfg.CloseTimeout, MaxMessage: l.cfg.maxMessage(),
		Hooks: endpoint.Hooks{
			Emit:  func(b []byte) { p.postLocked(&p.toCli, b) },
			Up:    func() { l.ready(s) },
			Ended: s.ended,
		},
	})
	c.ep = endpoint.NewConn(cc, endpoint.ConnConfig{
		Net: "session", Remote: local, Lock: &l.mu,
		CloseTimeout: l.cfg.CloseTimeout, MaxMessage: l.cfg.maxMessage(),
		Hooks: endpoint.Hooks{
			Emit:  func(b []byte) { p.postLocked(&p.toSrv, b) },
			Ended: c.ended,
		},
	})
	p.srv, p.cli = s, c
	l.conns[i] = s
	s.ep.Start(l.loop)
	c.ep.Start(l.loop)
	l.event(Event{Kind: EventConnected, ClientIndex: i, ClientID: ev.ClientID, Loopback: true})
	l.log.Debug().Int("client_index", i).Uint64("client_id", ev.ClientID).Msg("session: loopback client connected")
	l.later(s, s.ep.StepLocked(now, nil))
	l.later(c, c.ep.StepLocked(now, nil))
}

// loopDisconnectedLocked ends whichever side of a loopback slot is still
// open once netcode has freed the slot. A side that closed gracefully
// leaves its peer reading io.EOF, as a network client's disconnect
// packets would.
func (l *Listener) loopDisconnectedLocked(s *Conn, ev netcode.Event, now time.Time) {
	p := s.loop
	c := p.cli
	l.conns[ev.ClientIndex] = nil
	p.done = true
	p.toSrv.dgs, p.toCli.dgs, p.free = nil, nil, nil
	p.h.Remove()
	sCore, cCore := s.ep.Core(), c.ep.Core()
	var reason, cliReason error
	switch {
	case sCore.Ended():
		// The server side went first (Close, engine death, backlog).
		reason = sCore.Err()
		cliReason = ErrPeerClosed
		if reason != nil {
			cliReason = ErrServerClosed
		}
	case cCore.Ended():
		reason = cCore.Err()
		if reason == nil {
			reason = ErrPeerClosed
		}
	default:
		// netcode freed the slot itself: the server is stopping.
		reason, cliReason = ErrServerClosed, ErrServerClosed
	}
	l.later(s, s.peerLeftLocked(now, reason))
	l.later(c, c.peerLeftLocked(now, cliReason))
	l.event(Event{Kind: EventDisconnected, ClientIndex: ev.ClientIndex, ClientID: ev.ClientID, Loopback: true, Reason: reason})
	l.log.Debug().Int("client_index", ev.ClientIndex).Uint64("client_id", ev.ClientID).AnErr("reason", reason).Msg("session: loopback client disconnected")
}

// postLocked queues a copy of datagram b, which the engine reuses, for
// the side q belongs to, and makes sure the pump runs.
func (p *loopPair) postLocked(q *loopQueue, b []byte) {
	if p.done {
		return
	}
	var buf []byte
	if n := len(p.free); n > 0 && cap(p.free[n-1]) >= len(b) {
		buf = p.free[n-1][:len(b)]
		p.free = p.free[:n-1]
	} else {
		buf = make([]byte, len(b), max(len(b), netcode.MaxPayloadBytes))
	}
	copy(buf, b)
	q.dgs = append(q.dgs, buf)
	if !p.woken {
		p.woken = true
		// The loop's own lock is never held while a task runs, so waking
		// it under ours cannot deadlock.
		p.h.WakeBy(time.Now())
	}
}

// Run is the pump: it delivers what each side emitted to the other
// until neither has anything more to say, or for maxLoopRounds rounds.
func (p *loopPair) Run(time.Time) time.Time {
	l := p.l
	l.mu.Lock()
	for round := 0; !p.done && (len(p.toCli.dgs) > 0 || len(p.toSrv.dgs) > 0); round++ {
		if round == maxLoopRounds {
			l.unlockAndSettle()
			return time.Now()
		}
		// One clock reading under the lock keeps every engine's times in
		// order with the stamps the API calls put on them.
		now := time.Now()
		p.deliverLocked(p.cli, &p.toCli, now)
		p.deliverLocked(p.srv, &p.toSrv, now)
	}
	p.woken = false
	l.unlockAndSettle()
	return time.Time{}
}

// deliverLocked hands the batch waiting in q to c in one step, so that
// c answers a burst with one poll (and coalesced ACKs).
func (p *loopPair) deliverLocked(c *Conn, q *loopQueue, now time.Time) {
	batch := q.dgs
	if len(batch) == 0 {
		return
	}
	// What c emits while receiving goes to the other queue, and anything
	// else that posts here needs the lock held now, so q is quiet until
	// this returns; the swap lets the next batch reuse an array anyway.
	q.dgs, q.spare = q.spare[:0], batch
	p.l.later(c, c.ep.StepLocked(now, func(core *endpoint.Core, now time.Time) {
		for _, b := range batch {
			core.Receive(b, now)
		}
	}))
	for i, b := range batch {
		if len(p.free) < maxLoopFree {
			p.free = append(p.free, b)
		}
		batch[i] = nil
	}
}

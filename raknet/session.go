package raknet

import (
	"net/netip"
	"time"

	"github.com/netrak/netrak/reliability"
)

// Defaults for connections.
const (
	// DefaultHandshakeTimeout bounds the online handshake: connection
	// request to new incoming connection.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultConnectedPingInterval is how often a connection sends a
	// connected ping, which keeps an idle connection alive and measures
	// the RTT.
	DefaultConnectedPingInterval = 5 * time.Second
	// DefaultCloseTimeout bounds a graceful Close: the time allowed for
	// the peer to acknowledge the data still queued and the disconnection
	// notification.
	DefaultCloseTimeout = 3 * time.Second
	// DefaultReceiveBuffer bounds the bytes of user messages a connection
	// holds for its reader, on top of what the reliability engine holds
	// (reliability.Config.MaxReceiveBytes). Past both, the engine stops
	// acknowledging and the sender slows down.
	DefaultReceiveBuffer = 4 << 20
	// minPeerCloseLinger and maxPeerCloseLinger bound how long a
	// connection whose peer sent a disconnection notification lingers
	// after the peer's latest datagram; see session.peerCloseLinger. The
	// floor leaves room for the engine's repeat of the ACK (40 ms after
	// the first); the ceiling is how long a peer of this package waits
	// for the ACK by default (DefaultCloseTimeout) before it gives up.
	minPeerCloseLinger = 100 * time.Millisecond
	maxPeerCloseLinger = DefaultCloseTimeout
	// maxQueuedEvents bounds the receipts waiting for ReadReceipt; older
	// ones are dropped past it.
	maxQueuedEvents = 4096
)

// Message is a user message received on a connection.
type Message struct {
	// Data is the message, starting with its identifier byte. The caller
	// owns it: from ReadMessage it is a fresh buffer, from ReadMessageInto
	// the buffer passed in (or a larger one if that was too small).
	Data []byte
	// Reliability and Channel are what the frame carried on the wire.
	Reliability reliability.Reliability
	Channel     uint8
}

type sessionState uint8

const (
	stateHandshake sessionState = iota // online handshake in progress
	stateConnected
	stateClosed // terminal; err says why (nil after a local Close)
)

// sessionConfig is everything a session needs to start.
type sessionConfig struct {
	client        bool
	guid          uint64
	local, remote netip.AddrPort
	protocol      uint8
	engine        reliability.Config // MTU included

	handshakeTimeout time.Duration
	deadTimeout      time.Duration
	pingInterval     time.Duration
	receiveBuffer    int
}

// session is the sans-I/O state of one connection after the offline
// handshake: the online handshake, connected pings, the disconnection
// notification and the dead-connection timeout, over a reliability
// Engine. It sorts delivered messages into internal ones, which it
// handles, and user messages, which it queues for the reader.
type session struct {
	cfg sessionConfig
	eng *reliability.Engine

	state      sessionState
	err        error
	gotRequest bool // server: connection request answered
	justUp     bool // the handshake completed since the flag was cleared

	handshakeDeadline time.Time
	lastRecv          time.Time
	nextPing          time.Time
	pingRTT           time.Duration
	// lossMark holds lossSigns at the two latest connected pings: loss
	// since lossMark[0] is recent.
	lossMark [2]uint64

	closing        bool // Close called; flushing
	closeDeadline  time.Time
	sendDisconnect bool // a disconnection notification still has to be queued
	peerClosed     bool
	lingerUntil    time.Time // peer closed: end then unless it sends more

	queue   []Message // user messages for the reader; Data from bufs
	qhead   int
	partial int // bytes of queue[qhead] already returned by Read
	queued  int // bytes in queue
	bufs    bufferPool

	events        []reliability.Event
	eventsDropped uint64
	scratch       []byte
}

func newSession(cfg sessionConfig, now time.Time) (*session, error) {
	eng, err := reliability.New(cfg.engine)
	if err != nil {
		return nil, err
	}
	s := &session{cfg: cfg, eng: eng, lastRecv: now, handshakeDeadline: now.Add(cfg.handshakeTimeout)}
	s.bufs.maxFree = cfg.receiveBuffer
	if cfg.client {
		req := ConnectionRequest{ClientGUID: cfg.guid, Time: now.UnixMilli()}
		s.sendInternal(req.Append(s.scratch[:0]), reliability.Reliable, now)
	}
	return s, nil
}

// sendInternal queues a protocol message; the engine copies it.
func (s *session) sendInternal(b []byte, r reliability.Reliability, now time.Time) {
	s.scratch = b[:0]
	s.eng.Send(b, r, 0, reliability.Immediate, now)
}

// internalAddresses are the addresses sent in the handshake: ours first,
// then unassigned ones up to the count the protocol expects.
func (s *session) internalAddresses() []netip.AddrPort {
	list := make([]netip.AddrPort, InternalAddressCount(s.cfg.protocol))
	if s.cfg.local.Addr().Is4() && !s.cfg.local.Addr().IsUnspecified() {
		list[0] = s.cfg.local
	}
	return list
}

// receive hands a datagram from the peer to the engine and sorts out what
// it delivered.
func (s *session) receive(b []byte, now time.Time) {
	if s.state == stateClosed {
		return
	}
	s.lastRecv = now
	s.eng.Receive(b, now)
	s.drain(now)
	if s.peerClosed {
		// A peer that closed sends only what it still needs acknowledged:
		// answer at once and linger on.
		s.ackPeerClose(now)
	}
}

// ackPeerClose sends the ACKs owed to a peer that closed without the
// usual delay and extends the linger: the peer's Close waits for them.
func (s *session) ackPeerClose(now time.Time) {
	s.eng.FlushACKs(now)
	s.lingerUntil = now.Add(s.peerCloseLinger())
}

// peerCloseLinger is how long a connection whose peer closed stays after
// the peer's latest datagram to acknowledge resends. Our ACKs go out at
// once and the engine repeats each one, so the peer normally goes quiet
// and nothing arrives; a peer that missed both copies resends its
// disconnection notification (or data not yet acknowledged) after its
// retransmission timeout, doubled each time the resend is lost too.
//
// On a path that showed no loss lately, three of our RTOs (the peer's is
// alike on the same path) cover a lost ACK and a lost resend, as QUIC's
// draining period of three PTOs does. Where there was loss, the peer may
// have backed off to its longest timeout: then the linger is two RTO
// ceilings. Simulated 20% loss each way measured it: three RTOs left
// almost 1% of the peers' Closes without their final ACK (the peer waits
// out its close timeout), one ceiling 0.2%, two about 0.05%.
func (s *session) peerCloseLinger() time.Duration {
	st := s.eng.Stats()
	if lossSigns(&st) != s.lossMark[0] {
		return min(2*s.rtoCeiling(), maxPeerCloseLinger)
	}
	return min(max(3*st.RTO, minPeerCloseLinger), maxPeerCloseLinger)
}

// lossSigns sums the counters that grow when datagrams are lost either
// way: gaps we reported, our datagrams declared lost, and resends of what
// we had received (our ACK was lost or late).
func lossSigns(st *reliability.Stats) uint64 {
	return st.NAKsSent + st.DatagramsLost + st.Drops.DuplicateMessage + st.Drops.DuplicateDatagram
}

// rtoCeiling is the longest retransmission timeout of an engine
// configured as ours: reliability.Config.RTOMax, lowered to DeadTimeout/8.
func (s *session) rtoCeiling() time.Duration {
	lo, hi := s.cfg.engine.RTOMin, s.cfg.engine.RTOMax
	if lo == 0 {
		lo = reliability.DefaultRTOMin
	}
	if hi == 0 {
		hi = reliability.DefaultRTOMax
	}
	return min(hi, max(s.cfg.deadTimeout/8, lo))
}

// drain takes delivered messages from the engine while the reader's queue
// has room, and collects receipts.
func (s *session) drain(now time.Time) {
	for s.state != stateClosed && s.queued < s.cfg.receiveBuffer {
		m, ok := s.eng.ReadMessage()
		if !ok {
			break
		}
		s.handle(m, now)
	}
	for {
		ev, ok := s.eng.ReadEvent()
		if !ok {
			break
		}
		if ev.Kind == reliability.EventDead {
			s.end(ErrConnectionLost)
			return
		}
		if len(s.events) >= maxQueuedEvents {
			s.events = s.events[1:]
			s.eventsDropped++
		}
		s.events = append(s.events, ev)
	}
}

// handle processes one delivered message. Connected ping, pong, the
// lost-connection keep-alive and the disconnection notification are
// recognised by identifier and exact length in every state, as the
// original library does; handshake messages
// only during the handshake. Anything else is a user message.
func (s *session) handle(m reliability.Message, now time.Time) {
	p := m.Payload
	switch {
	case len(p) == connectedPingLen && p[0] == IDConnectedPing:
		ping, _ := ParseConnectedPing(p)
		pong := ConnectedPong{PingTime: ping.Time, PongTime: now.UnixMilli()}
		s.sendInternal(pong.Append(s.scratch[:0]), reliability.Unreliable, now)
		return
	case len(p) == connectedPongLen && p[0] == IDConnectedPong:
		pong, _ := ParseConnectedPong(p)
		if rtt := now.Sub(time.UnixMilli(pong.PingTime)); rtt >= 0 && rtt < time.Minute {
			s.pingRTT = rtt
		}
		return
	case len(p) == 1 && p[0] == IDDetectLostConnections:
		// The peer's keep-alive has done its job by being acknowledged;
		// the original library drops it the same way.
		return
	case len(p) == 1 && p[0] == IDDisconnectionNotification:
		// Its datagram may have come long ago, if the reader's queue was
		// full: the linger starts now.
		s.peerClosed = true
		s.ackPeerClose(now)
		return
	case s.state == stateHandshake:
		if s.handleHandshake(p, now) || !(s.gotRequest && !s.cfg.client) {
			return
		}
		// The server answered the request; the client may send data before
		// its new incoming connection arrives (it can be lost and resent).
	}
	if s.peerClosed || s.closing {
		return
	}
	// The engine's payload is only valid until its next ReadMessage.
	data := s.bufs.get(len(p))
	copy(data, p)
	s.queue = append(s.queue, Message{Data: data, Reliability: m.Reliability, Channel: m.Channel})
	s.queued += len(data)
}

// handleHandshake handles the online handshake messages and reports
// whether p was one.
func (s *session) handleHandshake(p []byte, now time.Time) bool {
	if len(p) == 0 {
		return false
	}
	switch {
	case !s.cfg.client && p[0] == IDConnectionRequest:
		req, err := ParseConnectionRequest(p)
		if err != nil {
			return true
		}
		acc := ConnectionRequestAccepted{
			ClientAddress:     s.cfg.remote,
			InternalAddresses: s.internalAddresses(),
			RequestTime:       req.Time,
			ReplyTime:         now.UnixMilli(),
		}
		s.sendInternal(acc.Append(s.scratch[:0]), reliability.Reliable, now)
		s.gotRequest = true
		return true
	case !s.cfg.client && p[0] == IDNewIncomingConnection && s.gotRequest:
		nic, err := ParseNewIncomingConnection(p)
		if err != nil {
			return true
		}
		if rtt := now.Sub(time.UnixMilli(nic.PingTime)); rtt >= 0 && rtt < time.Minute {
			s.pingRTT = rtt
		}
		s.up(now)
		return true
	case s.cfg.client && p[0] == IDConnectionRequestAccepted:
		acc, err := ParseConnectionRequestAccepted(p)
		if err != nil {
			return true
		}
		if rtt := now.Sub(time.UnixMilli(acc.RequestTime)); rtt >= 0 && rtt < time.Minute {
			s.pingRTT = rtt
		}
		nic := NewIncomingConnection{
			ServerAddress:     s.cfg.remote,
			InternalAddresses: s.internalAddresses(),
			PingTime:          acc.ReplyTime,
			PongTime:          now.UnixMilli(),
		}
		s.sendInternal(nic.Append(s.scratch[:0]), reliability.Reliable, now)
		s.up(now)
		s.ping(now)
		return true
	}
	return false
}

func (s *session) up(now time.Time) {
	s.state = stateConnected
	s.justUp = true
	s.nextPing = now.Add(s.cfg.pingInterval)
}

func (s *session) ping(now time.Time) {
	p := ConnectedPing{Time: now.UnixMilli()}
	s.sendInternal(p.Append(s.scratch[:0]), reliability.Unreliable, now)
	s.nextPing = now.Add(s.cfg.pingInterval)
	st := s.eng.Stats()
	s.lossMark = [2]uint64{s.lossMark[1], lossSigns(&st)}
}

// end makes the session terminal.
func (s *session) end(err error) {
	if s.state == stateClosed {
		return
	}
	s.state = stateClosed
	s.err = err
	s.eng.Close()
}

// poll runs the timers and appends every datagram due at now, calling
// emit for each. The datagram passed to emit is only valid during the
// call.
func (s *session) poll(now time.Time, out []byte, emit func([]byte)) []byte {
	if s.state == stateClosed {
		return out
	}
	switch {
	case s.state == stateHandshake && !now.Before(s.handshakeDeadline):
		s.end(ErrHandshakeTimeout)
		return out
	case now.Sub(s.lastRecv) >= s.cfg.deadTimeout, s.eng.Dead(now):
		s.end(ErrConnectionLost)
		return out
	}
	if s.state == stateConnected && !s.closing && !s.peerClosed && !now.Before(s.nextPing) {
		s.ping(now)
	}
	if s.sendDisconnect {
		if _, err := s.eng.Send([]byte{IDDisconnectionNotification}, reliability.ReliableOrdered, 0, reliability.Medium, now); err == nil {
			s.sendDisconnect = false
		}
	}
	out = s.appendDue(now, out, emit)
	if s.peerClosed {
		// The peer is gone, but the ACK of its disconnection notification
		// may be lost: keep acknowledging its resends until it has been
		// quiet for the linger. Messages already queued stay readable.
		if !now.Before(s.lingerUntil) {
			if s.closing {
				s.end(nil)
			} else {
				s.end(ErrPeerClosed)
			}
		}
		return out
	}
	if s.closing {
		switch {
		case !now.Before(s.closeDeadline):
			s.end(nil)
		case !s.sendDisconnect && s.eng.Idle():
			// Everything, the notification included, was acknowledged.
			// Acknowledge what the peer sent meanwhile before going, so
			// that it does not resend into the void.
			s.eng.FlushACKs(now)
			out = s.appendDue(now, out, emit)
			s.end(nil)
		}
	}
	return out
}

// appendDue emits every datagram the engine has due at now.
func (s *session) appendDue(now time.Time, out []byte, emit func([]byte)) []byte {
	for {
		var ok bool
		out, ok = s.eng.AppendDatagram(out[:0], now)
		if !ok {
			return out
		}
		emit(out)
	}
}

// nextWake is when poll must run next; the zero time means only input
// can change anything.
func (s *session) nextWake() time.Time {
	if s.state == stateClosed {
		return time.Time{}
	}
	t := s.eng.NextTimeout()
	earliest := func(c time.Time) {
		if !c.IsZero() && (t.IsZero() || c.Before(t)) {
			t = c
		}
	}
	if s.state == stateHandshake {
		earliest(s.handshakeDeadline)
	}
	earliest(s.lastRecv.Add(s.cfg.deadTimeout))
	if s.state == stateConnected && !s.closing && !s.peerClosed {
		earliest(s.nextPing)
	}
	if s.closing && s.sendDisconnect {
		earliest(s.lastRecv) // now, or in the past: at once
	}
	if s.peerClosed {
		earliest(s.lingerUntil)
	}
	if s.closing {
		earliest(s.closeDeadline)
	}
	return t
}

// close starts a graceful close: the disconnection notification goes
// after everything already queued on channel 0, and the session ends when
// the peer has acknowledged it, when the peer closes too, or at timeout.
// A session that never finished its handshake, or whose peer already
// closed, ends at the next poll.
func (s *session) close(now time.Time, timeout time.Duration) {
	if s.state == stateClosed || s.closing {
		return
	}
	s.closing = true
	s.closeDeadline = now.Add(timeout)
	switch {
	case s.state == stateHandshake:
		s.closeDeadline = now
	case !s.peerClosed:
		s.sendDisconnect = true
	}
	// Unread messages are of no use any more.
	s.queue, s.qhead, s.partial, s.queued = nil, 0, 0, 0
}

// released reports whether a local Close has nothing more to wait for:
// the session ended, or only lingers for a peer that closed.
func (s *session) released() bool { return s.state == stateClosed || s.peerClosed }

// hasMessage reports whether a user message waits for the reader.
func (s *session) hasMessage() bool { return s.qhead < len(s.queue) }

// read copies the head message into b, keeping what does not fit for the
// next read.
func (s *session) read(b []byte) int {
	m := &s.queue[s.qhead]
	n := copy(b, m.Data[s.partial:])
	s.partial += n
	if s.partial == len(m.Data) {
		s.pop(true)
	}
	return n
}

// readMessage removes the head message, after a partial read the rest of
// it, and gives its buffer to the caller.
func (s *session) readMessage() Message {
	m := s.queue[s.qhead]
	m.Data = m.Data[s.partial:len(m.Data):len(m.Data)]
	s.pop(false)
	return m
}

// readMessageInto is readMessage copying into buf[:0] (grown if too
// small), so that the queue's buffer can be recycled.
func (s *session) readMessageInto(buf []byte) Message {
	m := s.queue[s.qhead]
	m.Data = append(buf[:0], m.Data[s.partial:]...)
	s.pop(true)
	return m
}

// pop removes the head message; recycle says its buffer is free again.
func (s *session) pop(recycle bool) {
	if recycle {
		s.bufs.put(s.queue[s.qhead].Data)
	}
	s.queued -= len(s.queue[s.qhead].Data)
	s.queue[s.qhead] = Message{}
	s.qhead++
	s.partial = 0
	if s.qhead == len(s.queue) {
		s.queue, s.qhead = s.queue[:0], 0
	} else if s.qhead > 1024 && s.qhead*2 > len(s.queue) {
		n := copy(s.queue, s.queue[s.qhead:])
		clear(s.queue[n:])
		s.queue, s.qhead = s.queue[:n], 0
	}
}

// rtt is the best estimate of the round-trip time: the engine's smoothed
// RTT from acknowledgements, or the latest connected ping.
func (s *session) rtt() time.Duration {
	if r := s.eng.Stats().SmoothedRTT; r > 0 {
		return r
	}
	return s.pingRTT
}

package endpoint

import (
	"time"

	"github.com/netrak/netrak/reliability"
)

// maxQueuedEvents bounds the receipts waiting for the reader; older ones
// are dropped past it.
const maxQueuedEvents = 4096

// Protocol is what a protocol adds to a Core. Its methods are called with
// the connection's lock held.
type Protocol interface {
	// Intercept sees every message the engine delivers, in order, before
	// the reader, and reports whether it was the protocol's own (handled
	// or discarded) rather than a user message.
	Intercept(m reliability.Message, now time.Time) bool
	// Poll runs the protocol's timers; it may end the Core.
	Poll(now time.Time)
	// NextWake is when Poll must next run; zero for never.
	NextWake() time.Time
	// Linger is how long the Core stays after the peer's latest datagram
	// once the peer has said goodbye (PeerClosing), acknowledging the
	// peer's resends of what our ACKs may have missed.
	Linger() time.Duration
}

// Config is what a Core needs besides its Protocol.
type Config struct {
	// Engine configures the reliability engine.
	Engine reliability.Config
	// DeadTimeout ends the connection with ErrLost when no datagram has
	// come from the peer for that long; zero leaves silence to the
	// protocol (netcode times out silent peers itself).
	DeadTimeout time.Duration
	// ReceiveBuffer bounds the bytes of user messages waiting for the
	// reader, on top of what the engine holds; past both, the engine
	// stops acknowledging and the peer slows down.
	ReceiveBuffer int
	// Goodbye, if set, is sent reliable-ordered on channel 0 after
	// everything already queued when Close is called (RakNet's
	// disconnection notification).
	Goodbye []byte
	// ErrLost and ErrPeerClosed are the protocol's errors for a connection
	// lost to silence or a dead engine, and for one the peer closed.
	ErrLost, ErrPeerClosed error
}

// Core is the sans-I/O state of one connection over a reliability
// Engine. It sorts what the engine delivers into the protocol's messages
// and user messages, which it queues for the reader. Not safe for
// concurrent use.
type Core struct {
	cfg   Config
	proto Protocol
	eng   *reliability.Engine

	ended  bool
	err    error // why it ended; nil after a local Close
	up     bool  // the protocol's handshake is done
	justUp bool  // up since the flag was last taken

	lastRecv time.Time
	pingRTT  time.Duration // the protocol's own RTT measurement, before the engine has one

	closing        bool // Close called; flushing
	closeDeadline  time.Time
	goodbyePending bool
	peerClosed     bool
	lingerUntil    time.Time // peer closed: end then unless it sends more

	queue   []Message // user messages for the reader; Data from bufs
	qhead   int
	partial int // bytes of queue[qhead] already returned by Read
	queued  int // bytes in queue
	bufs    bufferPool

	events        []reliability.Event
	eventsDropped uint64
}

// NewCore returns the Core of a connection that starts at now. The
// protocol is attached with SetProtocol before first use, since it
// usually needs the Core itself.
func NewCore(cfg Config, now time.Time) (*Core, error) {
	eng, err := reliability.New(cfg.Engine)
	if err != nil {
		return nil, err
	}
	c := &Core{cfg: cfg, eng: eng, lastRecv: now}
	c.bufs.maxFree = cfg.ReceiveBuffer
	return c, nil
}

// SetProtocol attaches the protocol.
func (c *Core) SetProtocol(p Protocol) { c.proto = p }

// Engine is the connection's reliability engine, for the protocol's own
// messages and for statistics.
func (c *Core) Engine() *reliability.Engine { return c.eng }

// SendInternal queues a protocol message; the engine copies it.
func (c *Core) SendInternal(b []byte, r reliability.Reliability, now time.Time) {
	c.eng.Send(b, r, 0, reliability.Immediate, now)
}

// MarkUp records that the protocol's handshake is done; the Conn tells
// its owner once.
func (c *Core) MarkUp() {
	c.up = true
	c.justUp = true
}

// Up reports whether MarkUp was called.
func (c *Core) Up() bool { return c.up }

// Ended reports whether the Core is terminal.
func (c *Core) Ended() bool { return c.ended }

// Err is why the Core ended: nil while open or after a local Close.
func (c *Core) Err() error { return c.err }

// Closing reports whether Close was called.
func (c *Core) Closing() bool { return c.closing }

// PeerClosed reports whether the peer said goodbye.
func (c *Core) PeerClosed() bool { return c.peerClosed }

// SetPingRTT records the protocol's own RTT measurement, which RTT
// reports until the engine has a smoothed RTT.
func (c *Core) SetPingRTT(d time.Duration) { c.pingRTT = d }

// RTT is the best estimate of the round-trip time: the engine's smoothed
// RTT from acknowledgements, or the protocol's own measurement.
func (c *Core) RTT() time.Duration {
	if r := c.eng.Stats().SmoothedRTT; r > 0 {
		return r
	}
	return c.pingRTT
}

// Receive hands a datagram from the peer to the engine and sorts out what
// it delivered.
func (c *Core) Receive(b []byte, now time.Time) {
	if c.ended {
		return
	}
	c.lastRecv = now
	c.eng.Receive(b, now)
	c.Drain(now)
	if c.peerClosed {
		// A peer that closed sends only what it still needs acknowledged:
		// answer at once and linger on.
		c.ackPeerClose(now)
	}
}

// PeerClosing records the peer's in-band goodbye: messages after it are
// not delivered, ACKs owed go out at once, and the Core ends with
// ErrPeerClosed once the peer has been quiet for the protocol's Linger.
// Messages already queued stay readable.
func (c *Core) PeerClosing(now time.Time) {
	c.peerClosed = true
	c.ackPeerClose(now)
}

// PeerGone records that the peer left out of band (a netcode disconnect
// or timeout) and ends the Core with err at once. Every message the
// engine delivered before stays readable, whatever ReceiveBuffer says:
// the engine's own bound already holds them. err is ErrPeerClosed for a
// goodbye, after which reads return io.EOF once the queue is drained.
func (c *Core) PeerGone(now time.Time, err error) {
	if c.ended {
		return
	}
	c.drainAll(now)
	c.peerClosed = err == c.cfg.ErrPeerClosed
	c.End(err)
}

func (c *Core) ackPeerClose(now time.Time) {
	c.eng.FlushACKs(now)
	c.lingerUntil = now.Add(c.proto.Linger())
}

// Drain takes delivered messages from the engine while the reader's
// queue has room, and collects receipts.
func (c *Core) Drain(now time.Time) {
	for !c.ended && c.queued < c.cfg.ReceiveBuffer {
		m, ok := c.eng.ReadMessage()
		if !ok {
			break
		}
		c.handle(m, now)
	}
	c.collectEvents()
}

func (c *Core) drainAll(now time.Time) {
	for {
		m, ok := c.eng.ReadMessage()
		if !ok {
			break
		}
		c.handle(m, now)
	}
	c.collectEvents()
}

func (c *Core) collectEvents() {
	for !c.ended {
		ev, ok := c.eng.ReadEvent()
		if !ok {
			return
		}
		if ev.Kind == reliability.EventDead {
			c.End(c.cfg.ErrLost)
			return
		}
		if len(c.events) >= maxQueuedEvents {
			c.events = c.events[1:]
			c.eventsDropped++
		}
		c.events = append(c.events, ev)
	}
}

// handle passes one delivered message to the protocol and queues it for
// the reader if it is a user message.
func (c *Core) handle(m reliability.Message, now time.Time) {
	if c.proto.Intercept(m, now) || c.peerClosed || c.closing {
		return
	}
	// The engine's payload is only valid until its next ReadMessage.
	data := c.bufs.get(len(m.Payload))
	copy(data, m.Payload)
	c.queue = append(c.queue, Message{Data: data, Reliability: m.Reliability, Channel: m.Channel})
	c.queued += len(data)
}

// End makes the Core terminal.
func (c *Core) End(err error) {
	if c.ended {
		return
	}
	c.ended = true
	c.err = err
	c.eng.Close()
}

// Poll runs the timers and hands every datagram due at now to emit, which
// must not keep it. out is scratch space, returned for reuse.
func (c *Core) Poll(now time.Time, out []byte, emit func([]byte)) []byte {
	if c.ended {
		return out
	}
	c.proto.Poll(now)
	if c.ended {
		return out
	}
	if (c.cfg.DeadTimeout > 0 && now.Sub(c.lastRecv) >= c.cfg.DeadTimeout) || c.eng.Dead(now) {
		c.End(c.cfg.ErrLost)
		return out
	}
	if c.goodbyePending {
		if _, err := c.eng.Send(c.cfg.Goodbye, reliability.ReliableOrdered, 0, reliability.Medium, now); err == nil {
			c.goodbyePending = false
		}
	}
	out = c.appendDue(now, out, emit)
	if c.peerClosed {
		// The peer is gone, but the ACK of its goodbye may be lost: keep
		// acknowledging its resends until it has been quiet for the
		// linger.
		if !now.Before(c.lingerUntil) {
			if c.closing {
				c.End(nil)
			} else {
				c.End(c.cfg.ErrPeerClosed)
			}
		}
		return out
	}
	if c.closing {
		switch {
		case !now.Before(c.closeDeadline):
			c.End(nil)
		case !c.goodbyePending && c.eng.Idle():
			// Everything, the goodbye included, was acknowledged.
			// Acknowledge what the peer sent meanwhile before going, so
			// that it does not resend into the void.
			c.eng.FlushACKs(now)
			out = c.appendDue(now, out, emit)
			c.End(nil)
		}
	}
	return out
}

func (c *Core) appendDue(now time.Time, out []byte, emit func([]byte)) []byte {
	for {
		var ok bool
		out, ok = c.eng.AppendDatagram(out[:0], now)
		if !ok {
			return out
		}
		emit(out)
	}
}

// NextWake is when Poll must run next; the zero time means only input can
// change anything.
func (c *Core) NextWake() time.Time {
	if c.ended {
		return time.Time{}
	}
	t := c.eng.NextTimeout()
	earliest := func(x time.Time) {
		if !x.IsZero() && (t.IsZero() || x.Before(t)) {
			t = x
		}
	}
	earliest(c.proto.NextWake())
	if c.cfg.DeadTimeout > 0 {
		earliest(c.lastRecv.Add(c.cfg.DeadTimeout))
	}
	if c.goodbyePending {
		earliest(c.lastRecv) // now, or in the past: at once
	}
	if c.peerClosed {
		earliest(c.lingerUntil)
	}
	if c.closing {
		earliest(c.closeDeadline)
	}
	return t
}

// Close starts a graceful close: the goodbye, if the protocol has one,
// goes after everything already queued, and the Core ends when the peer
// has acknowledged everything, when the peer closes too, or at timeout.
// A Core whose handshake never finished ends at the next Poll. Unread
// messages are discarded.
func (c *Core) Close(now time.Time, timeout time.Duration) {
	if c.ended || c.closing {
		return
	}
	c.closing = true
	c.closeDeadline = now.Add(timeout)
	switch {
	case !c.up:
		c.closeDeadline = now
	case !c.peerClosed:
		c.goodbyePending = c.cfg.Goodbye != nil
	}
	for i := c.qhead; i < len(c.queue); i++ {
		c.bufs.put(c.queue[i].Data)
	}
	c.queue, c.qhead, c.partial, c.queued = nil, 0, 0, 0
}

// Released reports whether a local Close has nothing more to wait for:
// the Core ended, or only lingers for a peer that closed.
func (c *Core) Released() bool { return c.ended || c.peerClosed }

// takeUp reports, once, that the handshake completed.
func (c *Core) takeUp() bool {
	up := c.justUp
	c.justUp = false
	return up
}

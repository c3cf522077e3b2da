package raknet

import (
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
)

// Conn is a RakNet connection. It implements net.Conn: Read and Write
// carry user messages, reliable-ordered on channel 0, and deadlines work
// as on a TCP connection. WriteMessage and ReadMessage give access to the
// other reliabilities, the 32 ordering channels, priorities and receipts.
//
// Message boundaries: each Write sends b as one message (split into
// several when it exceeds the engine's MaxMessageSize); each Read returns
// bytes of at most one message. A message longer than the Read buffer is
// not truncated: the rest is returned by the following Reads. RakNet gives
// the first byte of a message its meaning, so applications send messages
// starting with an identifier of IDUserPacketEnum (0x86) or above; a
// message of exactly the shape of a connected ping (0x00, 9 bytes),
// connected pong (0x03, 17 bytes) or disconnection notification (0x15,
// 1 byte) is taken by the protocol, as by every RakNet peer.
//
// Close is graceful: it sends a disconnection notification after the data
// already written and waits, up to the close timeout, until the peer has
// acknowledged everything. The peer's Read then returns io.EOF. After
// Close, methods return errors matching net.ErrClosed.
//
// All methods are safe for concurrent use.
type Conn struct {
	tc           transport.Conn
	ownsTC       bool // a dialed connection closes its socket at the end
	local        netip.AddrPort
	remote       netip.AddrPort
	remoteGUID   uint64
	listener     *Listener
	counted      bool // pending in the listener's count; guarded by listener.mu
	log          zerolog.Logger
	closeTimeout time.Duration
	maxMessage   int

	mu           sync.Mutex
	s            *session
	out          []byte
	userClosed   bool
	readWaiting  int
	writeWaiting int
	eventWaiting int

	readable chan struct{} // pokes for blocked readers, writers, receipt readers
	writable chan struct{}
	eventCh  chan struct{}
	wake     chan struct{} // pokes the timer goroutine

	upOnce   sync.Once
	up       chan struct{} // closed when the handshake completes
	closedCh chan struct{} // closed when Close is called
	relOnce  sync.Once
	released chan struct{} // closed when Close has nothing more to wait for
	done     chan struct{} // closed when the connection has ended

	rdl, wdl *deadline
}

var _ net.Conn = (*Conn)(nil)

// connParams are the parts of a Conn its creator decides.
type connParams struct {
	tc           transport.Conn
	ownsTC       bool
	listener     *Listener
	remoteGUID   uint64
	log          zerolog.Logger
	closeTimeout time.Duration
	session      sessionConfig
}

func newConn(p connParams, now time.Time) (*Conn, error) {
	s, err := newSession(p.session, now)
	if err != nil {
		return nil, err
	}
	// Write splits its input into messages the engine accepts: the
	// engine's MaxMessageSize, whose default depends on MaxQueueBytes.
	maxMessage := p.session.engine.MaxMessageSize
	if maxMessage <= 0 {
		queue := p.session.engine.MaxQueueBytes
		if queue <= 0 {
			queue = reliability.DefaultMaxQueueBytes
		}
		maxMessage = min(reliability.DefaultMaxMessageSize, queue)
	}
	c := &Conn{
		tc: p.tc, ownsTC: p.ownsTC, listener: p.listener, log: p.log,
		local: p.session.local, remote: p.session.remote, remoteGUID: p.remoteGUID,
		closeTimeout: p.closeTimeout, maxMessage: maxMessage, s: s,
		readable: make(chan struct{}, 1), writable: make(chan struct{}, 1),
		eventCh: make(chan struct{}, 1), wake: make(chan struct{}, 1),
		up: make(chan struct{}), closedCh: make(chan struct{}), released: make(chan struct{}), done: make(chan struct{}),
		rdl: newDeadline(), wdl: newDeadline(),
	}
	return c, nil
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (c *Conn) emit(b []byte) {
	if err := c.tc.WriteTo(b, c.remote); err != nil {
		c.log.Debug().Err(err).Stringer("remote", c.remote).Msg("raknet: write failed")
	}
}

// step runs f, then the session's timers and output, under the lock, and
// wakes whoever the outcome concerns. It returns when the session wants
// to run next and whether it has ended.
func (c *Conn) step(f func(now time.Time)) (time.Time, bool) {
	c.mu.Lock()
	now := time.Now()
	if f != nil {
		f(now)
	}
	c.out = c.s.poll(now, c.out, c.emit)
	becameUp := c.s.justUp
	c.s.justUp = false
	released := c.s.released()
	ended := c.s.state == stateClosed
	next := c.s.nextWake()
	if c.readWaiting > 0 && (c.s.hasMessage() || c.s.peerClosed || ended) {
		poke(c.readable)
	}
	if c.writeWaiting > 0 {
		poke(c.writable)
	}
	if c.eventWaiting > 0 && (len(c.s.events) > 0 || ended) {
		poke(c.eventCh)
	}
	c.mu.Unlock()
	if released {
		c.relOnce.Do(func() { close(c.released) })
	}
	if becameUp {
		c.upOnce.Do(func() { close(c.up) })
		if c.listener != nil {
			c.listener.ready(c)
		}
	}
	return next, ended
}

// receive handles a datagram from the peer.
func (c *Conn) receive(b []byte) {
	c.step(func(now time.Time) { c.s.receive(b, now) })
	poke(c.wake)
}

// run is the connection's timer goroutine: it polls the session whenever
// the session asks, or when an operation pokes it, until the session ends.
func (c *Conn) run() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		next, ended := c.step(nil)
		if ended {
			c.finish()
			return
		}
		if !next.IsZero() {
			timer.Reset(time.Until(next))
		}
		select {
		case <-timer.C:
		case <-c.wake:
		}
		timer.Stop()
	}
}

// finish releases what the connection holds once its session ended.
func (c *Conn) finish() {
	if c.listener != nil {
		c.listener.remove(c)
	}
	if c.ownsTC {
		c.tc.Close()
	}
	c.relOnce.Do(func() { close(c.released) })
	c.mu.Lock()
	if c.s.err != nil {
		c.log.Debug().Err(c.s.err).Stringer("remote", c.remote).Msg("raknet: connection ended")
	}
	c.mu.Unlock()
	close(c.done)
}

func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "raknet", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// endedErrLocked is the error for an operation on a connection whose
// session ended.
func (c *Conn) endedErrLocked() error {
	if c.userClosed || c.s.err == nil {
		return net.ErrClosed
	}
	return c.s.err
}

// Read reads bytes of the next user message into b. See Conn for how
// messages map to reads. It returns io.EOF after the peer closed the
// connection and everything it sent before has been read. A message that
// fits b is copied once, from the engine into b, with no allocation.
func (c *Conn) Read(b []byte) (int, error) {
	if err := c.awaitMessage(); err != nil {
		return 0, err
	}
	n := c.s.read(b)
	c.afterReadLocked()
	return n, nil
}

// ReadMessage returns the next user message whole, with the reliability
// and channel it arrived with. After a partial Read it returns the rest of
// that message. It honours the read deadline and returns io.EOF like
// Read. The returned Data is the caller's, which costs an allocation per
// message; ReadMessageInto reuses a buffer instead.
func (c *Conn) ReadMessage() (Message, error) {
	if err := c.awaitMessage(); err != nil {
		return Message{}, err
	}
	m := c.s.readMessage()
	c.afterReadLocked()
	return m, nil
}

// ReadMessageInto is ReadMessage copying the message into buf: Data is
// buf[:len(message)] when buf has the capacity, otherwise a new buffer
// (pass it back in next time). A reader that reuses a large enough buffer
// allocates nothing per message.
func (c *Conn) ReadMessageInto(buf []byte) (Message, error) {
	if err := c.awaitMessage(); err != nil {
		return Message{}, err
	}
	m := c.s.readMessageInto(buf)
	c.afterReadLocked()
	return m, nil
}

// awaitMessage waits until a user message is ready for the reader
// and returns nil with c.mu held, or the read's error with it released:
// Close, the read deadline, io.EOF after the peer closed, or the end of
// the connection.
func (c *Conn) awaitMessage() error {
	for {
		c.mu.Lock()
		var err error
		switch {
		case c.userClosed:
			err = c.opError("read", net.ErrClosed)
		case c.rdl.expired():
			err = c.opError("read", os.ErrDeadlineExceeded)
		case c.s.hasMessage():
			return nil
		case c.s.peerClosed:
			err = io.EOF
		case c.s.state == stateClosed:
			err = c.opError("read", c.endedErrLocked())
		}
		if err != nil {
			c.mu.Unlock()
			return err
		}
		if err := c.waitLocked(&c.readWaiting, c.readable, c.rdl); err != nil {
			return c.opError("read", err)
		}
	}
}

// afterReadLocked refills the reader's queue from the engine, now that
// there is room, sends what that made due, and unlocks.
func (c *Conn) afterReadLocked() {
	now := time.Now()
	c.s.drain(now)
	c.out = c.s.poll(now, c.out, c.emit)
	if c.readWaiting > 0 && c.s.hasMessage() {
		poke(c.readable)
	}
	c.mu.Unlock()
	poke(c.wake)
}

// waitLocked waits, with c.mu held on entry and released on return, for
// a poke on ch, the deadline, Close or the end of the connection.
func (c *Conn) waitLocked(waiting *int, ch chan struct{}, dl *deadline) error {
	*waiting++
	c.mu.Unlock()
	var err error
	select {
	case <-ch:
	case <-dl.wait():
		err = os.ErrDeadlineExceeded
	case <-c.closedCh:
		err = net.ErrClosed
	case <-c.done:
	}
	c.mu.Lock()
	*waiting--
	c.mu.Unlock()
	return err
}

// Write sends b as a reliable-ordered message on channel 0 (several if b
// is longer than the maximum message size). It blocks while the send
// queue is full, until the write deadline.
func (c *Conn) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		chunk := b[n:min(len(b), n+c.maxMessage)]
		if _, err := c.send(chunk, reliability.ReliableOrdered, 0, reliability.Medium); err != nil {
			return n, err
		}
		n += len(chunk)
	}
	return n, nil
}

// WriteMessage sends msg with the given reliability, ordering channel
// (0..31) and priority. For the three receipt kinds it returns a receipt
// number that ReadReceipt later reports; otherwise 0. msg is copied. It
// blocks while the send queue is full, until the write deadline.
// Argument errors are reliability's (reliability.ErrInvalidChannel, ...).
func (c *Conn) WriteMessage(msg []byte, r reliability.Reliability, channel uint8, prio reliability.Priority) (uint32, error) {
	return c.send(msg, r, channel, prio)
}

func (c *Conn) send(msg []byte, r reliability.Reliability, channel uint8, prio reliability.Priority) (uint32, error) {
	for {
		c.mu.Lock()
		if c.userClosed {
			c.mu.Unlock()
			return 0, c.opError("write", net.ErrClosed)
		}
		if c.wdl.expired() {
			c.mu.Unlock()
			return 0, c.opError("write", os.ErrDeadlineExceeded)
		}
		if c.s.state == stateClosed {
			err := c.endedErrLocked()
			c.mu.Unlock()
			return 0, c.opError("write", err)
		}
		if c.s.peerClosed {
			c.mu.Unlock()
			return 0, c.opError("write", ErrPeerClosed)
		}
		now := time.Now()
		receipt, err := c.s.eng.Send(msg, r, channel, prio, now)
		if err == reliability.ErrQueueFull {
			if err := c.waitLocked(&c.writeWaiting, c.writable, c.wdl); err != nil {
				return 0, c.opError("write", err)
			}
			continue
		}
		if err != nil {
			c.mu.Unlock()
			return 0, c.opError("write", err)
		}
		c.out = c.s.poll(now, c.out, c.emit)
		c.mu.Unlock()
		poke(c.wake)
		return receipt, nil
	}
}

// ReadReceipt waits for the outcome of a message sent with a receipt
// kind: reliability.EventAcked or, for UnreliableWithAckReceipt,
// reliability.EventLost. At most 4096 outcomes are kept; older ones are
// dropped when nobody reads them.
func (c *Conn) ReadReceipt(ctx context.Context) (reliability.Event, error) {
	for {
		c.mu.Lock()
		if len(c.s.events) > 0 {
			ev := c.s.events[0]
			c.s.events = c.s.events[1:]
			c.mu.Unlock()
			return ev, nil
		}
		if c.userClosed {
			c.mu.Unlock()
			return reliability.Event{}, c.opError("read receipt", net.ErrClosed)
		}
		if c.s.state == stateClosed {
			err := c.endedErrLocked()
			c.mu.Unlock()
			return reliability.Event{}, c.opError("read receipt", err)
		}
		c.eventWaiting++
		c.mu.Unlock()
		var err error
		select {
		case <-c.eventCh:
		case <-ctx.Done():
			err = ctx.Err()
		case <-c.closedCh:
		case <-c.done:
		}
		c.mu.Lock()
		c.eventWaiting--
		c.mu.Unlock()
		if err != nil {
			return reliability.Event{}, err
		}
	}
}

// Close closes the connection gracefully; see Conn. It blocks until the
// peer has acknowledged everything sent, or the close timeout passes. If
// the peer closed first, Close returns at once and the connection keeps
// acknowledging the peer's resends in the background for a short while,
// in case our ACK of its goodbye was lost (see Done).
// Blocked reads and writes return at once. It returns nil; later calls
// wait for the first to finish and return nil too.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.userClosed {
		c.mu.Unlock()
		<-c.released
		return nil
	}
	c.userClosed = true
	c.s.close(time.Now(), c.closeTimeout)
	close(c.closedCh)
	c.mu.Unlock()
	poke(c.wake)
	<-c.released
	return nil
}

func (c *Conn) isUp() bool {
	select {
	case <-c.up:
		return true
	default:
		return false
	}
}

// Done returns a channel closed when the connection has ended: after
// Close, after the peer closed it and the connection stopped lingering,
// or when it was lost. A connection whose peer closed lingers after the
// peer's latest datagram for three retransmission timeouts (at least
// 100 ms) on a path without recent loss, and for two RTO ceilings (2.5 s
// with the default reliability settings) after loss, when the peer may
// have backed off.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the connection ended: nil while it is open or after a
// local Close, ErrPeerClosed, ErrConnectionLost or ErrHandshakeTimeout.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s.peerClosed {
		return ErrPeerClosed
	}
	if c.s.state != stateClosed {
		return nil
	}
	return c.s.err
}

// LocalAddr returns the local UDP address.
func (c *Conn) LocalAddr() net.Addr { return net.UDPAddrFromAddrPort(c.local) }

// RemoteAddr returns the peer's UDP address.
func (c *Conn) RemoteAddr() net.Addr { return net.UDPAddrFromAddrPort(c.remote) }

// RemoteGUID is the peer's RakNet GUID.
func (c *Conn) RemoteGUID() uint64 { return c.remoteGUID }

// Protocol is the RakNet protocol version of the connection.
func (c *Conn) Protocol() uint8 { return c.s.cfg.protocol }

// MTU is the negotiated MTU.
func (c *Conn) MTU() int { return c.s.cfg.engine.MTU }

// SetDeadline sets the read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.rdl.set(t)
	c.wdl.set(t)
	return nil
}

// SetReadDeadline sets the deadline for Read and ReadMessage; the zero
// time means none.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.rdl.set(t)
	return nil
}

// SetWriteDeadline sets the deadline for Write and WriteMessage; the zero
// time means none.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.wdl.set(t)
	return nil
}

// RTT returns the round-trip time: the reliability engine's smoothed RTT,
// or before the first acknowledgement the RTT of the latest connected
// ping.
func (c *Conn) RTT() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s.rtt()
}

// Latency returns half the RTT, the one-way delay as RakNet reports it.
func (c *Conn) Latency() time.Duration { return c.RTT() / 2 }

// Stats returns the reliability engine's counters for this connection.
func (c *Conn) Stats() reliability.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s.eng.Stats()
}

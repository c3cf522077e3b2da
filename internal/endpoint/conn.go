package endpoint

import (
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/netrak/netrak/internal/driver"
	"github.com/netrak/netrak/reliability"
)

// Hooks connect a Conn to its owner. Emit is required; the others may be
// nil. They are called without the Conn's lock, except Emit, which runs
// under it.
type Hooks struct {
	// Emit sends one datagram to the peer; it must not keep b.
	Emit func(b []byte)
	// Up runs once, when the protocol's handshake completes.
	Up func()
	// Ended runs once, on the loop's goroutine, when the Core has ended:
	// the owner releases what the connection held.
	Ended func(err error)
}

// ConnConfig is what NewConn needs besides the Core.
type ConnConfig struct {
	// Net names the protocol in errors (net.OpError.Net).
	Net           string
	Local, Remote netip.AddrPort
	// Lock guards the Core. Connections that share state in their Emit
	// (session's server: one netcode core for every client) share one
	// lock; nil gives the Conn its own.
	Lock         sync.Locker
	CloseTimeout time.Duration
	// MaxMessage is the longest piece Write puts in one message.
	MaxMessage int
	Hooks      Hooks
}

// Conn is a Core made usable from goroutines. Every method is safe for
// concurrent use. It is driven by a driver.Loop (Add it, then Start).
type Conn struct {
	cfg ConnConfig
	mu  sync.Locker
	c   *Core
	out []byte
	h   *driver.Handle

	userClosed   bool
	readWaiting  int
	writeWaiting int
	eventWaiting int
	finished     bool

	readable chan struct{} // pokes for blocked readers, writers, receipt readers
	writable chan struct{}
	eventCh  chan struct{}

	upOnce   sync.Once
	up       chan struct{} // closed when the handshake completes
	closedCh chan struct{} // closed when Close is called
	relOnce  sync.Once
	released chan struct{} // closed when Close has nothing more to wait for
	done     chan struct{} // closed when the connection has ended

	rdl, wdl *deadline
}

// NewConn wraps core. Start it on a loop before use.
func NewConn(core *Core, cfg ConnConfig) *Conn {
	mu := cfg.Lock
	if mu == nil {
		mu = new(sync.Mutex)
	}
	return &Conn{
		cfg: cfg, mu: mu, c: core,
		readable: make(chan struct{}, 1), writable: make(chan struct{}, 1), eventCh: make(chan struct{}, 1),
		up: make(chan struct{}), closedCh: make(chan struct{}), released: make(chan struct{}), done: make(chan struct{}),
		rdl: newDeadline(), wdl: newDeadline(),
	}
}

// Start puts the Conn on loop, which runs its timers from then on.
func (c *Conn) Start(loop *driver.Loop) {
	c.h = loop.Add(c)
	c.h.WakeBy(time.Now())
}

// Run is the loop's entry: it runs the timers and sends what is due.
func (c *Conn) Run(time.Time) time.Time {
	next, ended := c.step(nil)
	if ended {
		c.finish()
		return time.Time{}
	}
	return next
}

// Locked runs f with the Conn's lock held, then its timers and output,
// and wakes whoever the outcome concerns. An owner with a lock of its own
// delivers datagrams through it (core.Receive).
func (c *Conn) Locked(f func(core *Core, now time.Time)) {
	c.schedule(c.step(f))
}

// Outcome is what StepLocked leaves for Settle to do once the lock is
// released.
type Outcome struct {
	next               time.Time
	ended, up, release bool
}

// StepLocked is Locked for an owner that already holds the shared lock
// (ConnConfig.Lock) and the time: it runs f, the timers and output, and
// wakes blocked readers and writers. The owner passes the Outcome to
// Settle after releasing the lock.
func (c *Conn) StepLocked(now time.Time, f func(core *Core, now time.Time)) Outcome {
	if f != nil {
		f(c.c, now)
	}
	c.out = c.c.Poll(now, c.out, c.cfg.Hooks.Emit)
	c.notifyLocked()
	return Outcome{next: c.c.NextWake(), ended: c.c.Ended(), up: c.c.takeUp(), release: c.c.Released()}
}

// Settle runs the hooks an Outcome calls for and schedules the Conn's
// timers; call it without the lock.
func (c *Conn) Settle(o Outcome) {
	if o.release {
		c.relOnce.Do(func() { close(c.released) })
	}
	if o.up {
		c.upOnce.Do(func() { close(c.up) })
		if c.cfg.Hooks.Up != nil {
			c.cfg.Hooks.Up()
		}
	}
	c.schedule(o.next, o.ended)
}

// step runs f, then the Core's timers and output, under the lock, and
// settles the outcome but for scheduling: it returns the time the Core
// wants to run next and whether it has ended.
func (c *Conn) step(f func(core *Core, now time.Time)) (time.Time, bool) {
	c.mu.Lock()
	o := c.StepLocked(time.Now(), f)
	c.mu.Unlock()
	next, ended := o.next, o.ended
	o.next, o.ended = time.Time{}, false // the caller schedules
	c.Settle(o)
	return next, ended
}

// notifyLocked pokes the waiters whose condition may have changed.
func (c *Conn) notifyLocked() {
	ended := c.c.Ended()
	if c.readWaiting > 0 && (c.c.HasMessage() || c.c.PeerClosed() || ended) {
		driver.Poke(c.readable)
	}
	if c.writeWaiting > 0 {
		driver.Poke(c.writable)
	}
	if c.eventWaiting > 0 && (len(c.c.events) > 0 || ended) {
		driver.Poke(c.eventCh)
	}
}

// schedule asks the loop to run the Conn by next, or at once if it ended
// so that the loop finishes it.
func (c *Conn) schedule(next time.Time, ended bool) {
	if c.h == nil {
		return
	}
	if ended {
		next = time.Now()
	}
	c.h.WakeBy(next)
}

// finish releases what the connection holds once its Core ended.
func (c *Conn) finish() {
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		return
	}
	c.finished = true
	err := c.c.Err()
	c.mu.Unlock()
	c.h.Remove()
	if c.cfg.Hooks.Ended != nil {
		c.cfg.Hooks.Ended(err)
	}
	c.relOnce.Do(func() { close(c.released) })
	close(c.done)
}

// Abort ends the connection at once, without a goodbye, and waits until
// it has finished. Err reports err unless it had ended already.
func (c *Conn) Abort(err error) {
	c.mu.Lock()
	c.c.End(err)
	c.notifyLocked()
	c.mu.Unlock()
	c.schedule(time.Time{}, true)
	<-c.done
}

func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.cfg.Net, Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// endedErrLocked is the error for an operation on a connection whose
// Core ended.
func (c *Conn) endedErrLocked() error {
	if c.userClosed || c.c.Err() == nil {
		return net.ErrClosed
	}
	return c.c.Err()
}

// Read reads bytes of the next user message into b; a message longer
// than b is returned by several Reads. It returns io.EOF after the peer
// closed the connection and everything it sent before has been read.
func (c *Conn) Read(b []byte) (int, error) {
	if err := c.awaitMessage(); err != nil {
		return 0, err
	}
	n := c.c.Read(b)
	c.afterReadLocked()
	return n, nil
}

// ReadMessage returns the next user message whole; its Data is the
// caller's.
func (c *Conn) ReadMessage() (Message, error) {
	if err := c.awaitMessage(); err != nil {
		return Message{}, err
	}
	m := c.c.ReadMessage()
	c.afterReadLocked()
	return m, nil
}

// ReadMessageInto is ReadMessage copying the message into buf (or a
// larger buffer if buf is too small).
func (c *Conn) ReadMessageInto(buf []byte) (Message, error) {
	if err := c.awaitMessage(); err != nil {
		return Message{}, err
	}
	m := c.c.ReadMessageInto(buf)
	c.afterReadLocked()
	return m, nil
}

// awaitMessage waits until a user message is ready for the reader and
// returns nil with the lock held, or the read's error with it released:
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
		case c.c.HasMessage():
			return nil
		case c.c.PeerClosed():
			err = io.EOF
		case c.c.Ended():
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
	c.c.Drain(now)
	c.out = c.c.Poll(now, c.out, c.cfg.Hooks.Emit)
	if c.readWaiting > 0 && c.c.HasMessage() {
		driver.Poke(c.readable)
	}
	next, ended := c.c.NextWake(), c.c.Ended()
	c.mu.Unlock()
	c.schedule(next, ended)
}

// waitLocked waits, with the lock held on entry and released on return,
// for a poke on ch, the deadline, Close or the end of the connection.
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

// Write sends b as reliable-ordered messages on channel 0, each at most
// MaxMessage bytes. It blocks while the send queue is full, until the
// write deadline.
func (c *Conn) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		chunk := b[n:min(len(b), n+c.cfg.MaxMessage)]
		if _, err := c.Send(chunk, reliability.ReliableOrdered, 0, reliability.Medium); err != nil {
			return n, err
		}
		n += len(chunk)
	}
	return n, nil
}

// Send queues msg with the given reliability, ordering channel and
// priority and returns its receipt number (0 unless a receipt kind). It
// blocks while the send queue is full, until the write deadline. errPeer
// is returned once the peer has closed.
func (c *Conn) Send(msg []byte, r reliability.Reliability, channel uint8, prio reliability.Priority) (uint32, error) {
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
		if c.c.Ended() {
			err := c.endedErrLocked()
			c.mu.Unlock()
			return 0, c.opError("write", err)
		}
		if c.c.PeerClosed() {
			c.mu.Unlock()
			return 0, c.opError("write", c.c.cfg.ErrPeerClosed)
		}
		now := time.Now()
		receipt, err := c.c.eng.Send(msg, r, channel, prio, now)
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
		c.out = c.c.Poll(now, c.out, c.cfg.Hooks.Emit)
		next, ended := c.c.NextWake(), c.c.Ended()
		c.mu.Unlock()
		c.schedule(next, ended)
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
		if ev, ok := c.c.NextEvent(); ok {
			c.mu.Unlock()
			return ev, nil
		}
		if c.userClosed {
			c.mu.Unlock()
			return reliability.Event{}, c.opError("read receipt", net.ErrClosed)
		}
		if c.c.Ended() {
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

// Close closes the connection gracefully and blocks until the peer has
// acknowledged everything sent, or the close timeout passes; see
// Core.Close. Blocked reads and writes return at once. Later calls wait
// for the first to finish. It returns nil.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.userClosed {
		c.mu.Unlock()
		<-c.released
		return nil
	}
	c.userClosed = true
	c.c.Close(time.Now(), c.cfg.CloseTimeout)
	close(c.closedCh)
	c.mu.Unlock()
	// Run the Core at once: a goodbye may be due, or nothing may be left
	// to wait for.
	c.schedule(time.Now(), false)
	<-c.released
	return nil
}

// IsUp reports whether the handshake completed.
func (c *Conn) IsUp() bool {
	select {
	case <-c.up:
		return true
	default:
		return false
	}
}

// UpChan is closed when the handshake completes.
func (c *Conn) UpChan() <-chan struct{} { return c.up }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the connection ended: nil while it is open or after a
// local Close, the protocol's ErrPeerClosed once the peer has closed, or
// the error the Core ended with.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c.PeerClosed() {
		return c.c.cfg.ErrPeerClosed
	}
	if !c.c.Ended() {
		return nil
	}
	return c.c.Err()
}

// LocalAddr returns the local UDP address.
func (c *Conn) LocalAddr() net.Addr { return net.UDPAddrFromAddrPort(c.cfg.Local) }

// RemoteAddr returns the peer's UDP address.
func (c *Conn) RemoteAddr() net.Addr { return net.UDPAddrFromAddrPort(c.cfg.Remote) }

// SetLocal changes the local address reported, before the Conn is in use.
func (c *Conn) SetLocal(a netip.AddrPort) { c.cfg.Local = a }

// SetDeadline sets the read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.rdl.set(t)
	c.wdl.set(t)
	return nil
}

// SetReadDeadline sets the deadline for the read methods; the zero time
// means none.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.rdl.set(t)
	return nil
}

// SetWriteDeadline sets the deadline for Write and Send; the zero time
// means none.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.wdl.set(t)
	return nil
}

// RTT returns the Core's round-trip time estimate.
func (c *Conn) RTT() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c.RTT()
}

// Stats returns the reliability engine's counters.
func (c *Conn) Stats() reliability.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c.eng.Stats()
}

// Core returns the Core; touch it only inside Locked.
func (c *Conn) Core() *Core { return c.c }

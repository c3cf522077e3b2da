package session

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/internal/endpoint"
	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/reliability"
)

// Message is a message received on a connection. The caller owns Data:
// from ReadMessage it is a fresh buffer, from ReadMessageInto the buffer
// passed in (or a larger one if that was too small).
type Message = endpoint.Message

// Stats are a connection's counters: its reliability engine's, and the
// netcode packets exchanged with the peer.
type Stats struct {
	Reliability reliability.Stats
	// Netcode packets sent to and received from the peer: payloads (each
	// one RakNet datagram) and keep-alives, which go out only when no
	// payload has for netcode.KeepAliveInterval.
	PacketsSent        uint64
	PacketsReceived    uint64
	PayloadsSent       uint64
	PayloadsReceived   uint64
	KeepAlivesSent     uint64
	KeepAlivesReceived uint64
	// PacketsDropped counts netcode packets from the peer's address that
	// were dropped (replayed, failed to decrypt, ...), on the server
	// side; the client counts every drop, whoever sent it.
	PacketsDropped uint64
}

// Conn is a session connection: netcode's encrypted, authenticated
// packets carrying RakNet's reliability layer. It implements net.Conn on
// reliable-ordered channel 0, and offers a message API with RakNet's
// eight reliabilities, 32 ordering channels and four priorities. Messages
// of any size up to the engine's MaxMessageSize are split into datagrams
// that each fill at most one netcode payload.
//
// Close is graceful: it waits, up to the close timeout, until the peer
// has acknowledged everything written, then sends netcode's disconnect
// packets. The peer's Read then returns io.EOF once everything before it
// has been read. After Close, methods return errors matching
// net.ErrClosed. All methods are safe for concurrent use.
type Conn struct {
	ep *endpoint.Conn
	mu sync.Locker // shared with the Listener or client driver that owns it
	// owner, for a Listener's Conns, settles what leave leaves pending
	// (the peer side of a loopback slot ending); nil for a dialled Conn.
	owner *guard
	loop  *loopPair // set on both sides of a loopback client

	index    int
	clientID uint64
	userData [netcode.UserDataBytes]byte
	server   bool

	// Guarded by mu.
	gone   bool            // the netcode connection ended (slot freed)
	stats  func() Stats    // netcode counters while connected
	frozen Stats           // the last counters, once gone
	leave  func(time.Time) // ends the netcode connection after a local end
}

var _ net.Conn = (*Conn)(nil)

// protocol is session's part of an endpoint.Core: nothing travels inside
// the engine but user messages, since netcode carries the handshake,
// keep-alives and disconnection outside it.
type protocol struct{}

func (protocol) Intercept(reliability.Message, time.Time) bool { return false }
func (protocol) Poll(time.Time)                                {}
func (protocol) NextWake() time.Time                           { return time.Time{} }
func (protocol) Linger() time.Duration                         { return 0 }

// newCore returns the engine side of a connection that is up at once:
// netcode's handshake is over before it exists.
func newCore(cfg *ConnConfig, log zerolog.Logger, now time.Time) (*endpoint.Core, error) {
	core, err := endpoint.NewCore(endpoint.Config{
		Engine:        cfg.engineConfig(log),
		ReceiveBuffer: cfg.ReceiveBuffer,
		ErrLost:       ErrConnectionLost,
		ErrPeerClosed: ErrPeerClosed,
	}, now)
	if err != nil {
		return nil, err
	}
	core.SetProtocol(protocol{})
	core.MarkUp()
	return core, nil
}

// ended is the Conn's end hook: a connection that ended on our side
// (Close, engine death) ends its netcode connection too.
func (c *Conn) ended(error) {
	if c.owner != nil {
		c.owner.mu.Lock()
		if !c.gone && c.leave != nil {
			c.leave(time.Now())
		}
		c.owner.unlockAndSettle()
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.gone && c.leave != nil {
		c.leave(time.Now())
	}
}

// peerLeft ends the connection because netcode's ended, with err; the
// caller holds mu and settles the outcome.
func (c *Conn) peerLeftLocked(now time.Time, err error) endpoint.Outcome {
	if c.stats != nil {
		c.frozen = c.stats()
	}
	c.gone = true
	return c.ep.StepLocked(now, func(core *endpoint.Core, now time.Time) { core.PeerGone(now, err) })
}

// Read reads bytes of the next message on reliable-ordered channel 0, or
// of any message, into b; a message longer than b is returned by several
// Reads. It returns io.EOF after the peer closed the connection and
// everything it sent before has been read.
func (c *Conn) Read(b []byte) (int, error) { return c.ep.Read(b) }

// ReadMessage returns the next message whole, with the reliability and
// channel it arrived with. Data is the caller's, which costs an
// allocation per message; ReadMessageInto reuses a buffer instead.
func (c *Conn) ReadMessage() (Message, error) { return c.ep.ReadMessage() }

// ReadMessageInto is ReadMessage copying the message into buf: Data is
// buf[:len(message)] when buf has the capacity, otherwise a new buffer.
// A reader that reuses a large enough buffer allocates nothing per
// message.
func (c *Conn) ReadMessageInto(buf []byte) (Message, error) { return c.ep.ReadMessageInto(buf) }

// Write sends b as a reliable-ordered message on channel 0 (several if b
// is longer than the maximum message size). It blocks while the send
// queue is full, until the write deadline.
func (c *Conn) Write(b []byte) (int, error) { return c.ep.Write(b) }

// WriteMessage sends msg with the given reliability, ordering channel
// (0..31) and priority. For the three receipt kinds it returns a receipt
// number that ReadReceipt later reports; otherwise 0. msg is copied. It
// blocks while the send queue is full, until the write deadline. Argument
// errors are reliability's (reliability.ErrInvalidChannel, ...).
func (c *Conn) WriteMessage(msg []byte, r reliability.Reliability, channel uint8, prio reliability.Priority) (uint32, error) {
	return c.ep.Send(msg, r, channel, prio)
}

// ReadReceipt waits for the outcome of a message sent with a receipt
// kind: reliability.EventAcked, or for UnreliableWithAckReceipt
// reliability.EventLost. At most 4096 outcomes are kept.
func (c *Conn) ReadReceipt(ctx context.Context) (reliability.Event, error) {
	return c.ep.ReadReceipt(ctx)
}

// Close closes the connection gracefully; see Conn. It blocks until the
// peer has acknowledged everything sent, or the close timeout passes,
// then disconnects. Blocked reads and writes return at once. It returns
// nil; later calls wait for the first to finish.
func (c *Conn) Close() error { return c.ep.Close() }

// Done returns a channel closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.ep.Done() }

// Err reports why the connection ended: nil while it is open or after a
// local Close, else ErrPeerClosed, ErrTimedOut, ErrConnectionLost,
// ErrServerClosed or an error wrapping ErrTransportFailed.
func (c *Conn) Err() error { return c.ep.Err() }

// LocalAddr returns the local UDP address.
func (c *Conn) LocalAddr() net.Addr { return c.ep.LocalAddr() }

// RemoteAddr returns the peer's UDP address.
func (c *Conn) RemoteAddr() net.Addr { return c.ep.RemoteAddr() }

// SetDeadline sets the read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error { return c.ep.SetDeadline(t) }

// SetReadDeadline sets the deadline for the read methods; the zero time
// means none.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.ep.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline for Write and WriteMessage; the zero
// time means none.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.ep.SetWriteDeadline(t) }

// RTT returns the reliability engine's smoothed round-trip time.
func (c *Conn) RTT() time.Duration { return c.ep.RTT() }

// ClientIndex is the client's slot on the server.
func (c *Conn) ClientIndex() int { return c.index }

// ClientID is the client id from the connect token; on the client side,
// which cannot read the token's private part, it is 0. Both sides of a
// loopback client know the id given to ConnectLoopback.
func (c *Conn) ClientID() uint64 { return c.clientID }

// UserData is the 256 bytes of user data from the client's connect
// token; on the client side it is zero. Both sides of a loopback client
// have the user data given to ConnectLoopback.
func (c *Conn) UserData() [netcode.UserDataBytes]byte { return c.userData }

// Loopback reports whether c is either side of a client connected with
// Listener.ConnectLoopback.
func (c *Conn) Loopback() bool { return c.loop != nil }

// Stats returns the connection's counters.
func (c *Conn) Stats() Stats {
	st := c.ep.Stats()
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.frozen
	if !c.gone && c.stats != nil {
		s = c.stats()
	}
	s.Reliability = st
	return s
}

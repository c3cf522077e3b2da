package raknet

import (
	"context"
	"net"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/internal/driver"
	"github.com/netrak/netrak/internal/endpoint"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
)

// Conn is a RakNet connection. It implements net.Conn on top of a message
// API: Write sends b as one message (split into
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
	ep         *endpoint.Conn
	o          *online
	tc         transport.Conn
	ownsTC     bool         // a dialed connection closes its socket at the end
	loop       *driver.Loop // a dialed connection's own; nil for a listener's
	remoteGUID uint64
	listener   *Listener
	counted    bool // pending in the listener's count; guarded by listener.mu
	log        zerolog.Logger
}

var _ net.Conn = (*Conn)(nil)

// ConnConfig holds the settings of a connection. DialConfig and
// ListenConfig embed it, so that a dialed connection and an accepted one
// are configured alike. Zero values take the defaults documented with the
// constants of the same names.
type ConnConfig struct {
	// HandshakeTimeout bounds the online handshake; 0 means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// CloseTimeout bounds a graceful Close; 0 means DefaultCloseTimeout.
	CloseTimeout time.Duration
	// PingInterval is the time between connected pings; 0 means
	// DefaultConnectedPingInterval.
	PingInterval time.Duration
	// ReceiveBuffer bounds the bytes of messages waiting for the reader;
	// 0 means DefaultReceiveBuffer.
	ReceiveBuffer int
	// Reliability configures the connection's engine; its MTU is set by
	// the handshake, and its DeadTimeout is also the time without any
	// datagram after which a connection is lost. MaxOutstandingSplits
	// defaults to 16 here, so that peers like go-raknet, which drop a
	// connection reassembling more than 16 split messages, keep up.
	Reliability reliability.Config
	// Logger receives debug messages, a Listener's own included; the zero
	// value is silent.
	Logger zerolog.Logger
}

// params is what a connection takes from c, defaults filled in, once the
// offline handshake has settled its MTU. The caller adds the socket, the
// peers and the protocol.
func (c *ConnConfig) params(mtu int) connParams {
	engine := engineConfig(c.Reliability, mtu, c.Logger)
	return connParams{
		log:          c.Logger,
		closeTimeout: orDefault(c.CloseTimeout, DefaultCloseTimeout),
		online: onlineConfig{
			engine:           engine,
			handshakeTimeout: orDefault(c.HandshakeTimeout, DefaultHandshakeTimeout),
			deadTimeout:      engine.DeadTimeout,
			pingInterval:     orDefault(c.PingInterval, DefaultConnectedPingInterval),
			receiveBuffer:    orDefault(c.ReceiveBuffer, DefaultReceiveBuffer),
		},
	}
}

// engineConfig is the reliability configuration of one connection.
func engineConfig(base reliability.Config, mtu int, log zerolog.Logger) reliability.Config {
	base.MTU = mtu
	if base.MaxOutstandingSplits == 0 {
		base.MaxOutstandingSplits = 16
	}
	// Only zero takes a default: reliability.New refuses a negative value.
	if base.DeadTimeout == 0 {
		base.DeadTimeout = reliability.DefaultDeadTimeout
	}
	if base.ACKDelay == 0 {
		base.ACKDelay = reliability.DefaultACKDelay
	}
	base.Logger = log
	return base
}

func orDefault[T int | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// connParams are the parts of a Conn its creator decides.
type connParams struct {
	tc           transport.Conn
	ownsTC       bool
	listener     *Listener
	remoteGUID   uint64
	log          zerolog.Logger
	closeTimeout time.Duration
	online       onlineConfig
}

func newConn(p connParams, now time.Time) (*Conn, error) {
	o, err := newOnline(p.online, now)
	if err != nil {
		return nil, err
	}
	// Write splits its input into messages the engine accepts: the
	// engine's MaxMessageSize, whose default depends on MaxQueueBytes.
	maxMessage := p.online.engine.MaxMessageSize
	if maxMessage <= 0 {
		queue := p.online.engine.MaxQueueBytes
		if queue <= 0 {
			queue = reliability.DefaultMaxQueueBytes
		}
		maxMessage = min(reliability.DefaultMaxMessageSize, queue)
	}
	c := &Conn{
		o: o, tc: p.tc, ownsTC: p.ownsTC, listener: p.listener,
		remoteGUID: p.remoteGUID, log: p.log,
	}
	remote := p.online.remote
	c.ep = endpoint.NewConn(o.core, endpoint.ConnConfig{
		Net: "raknet", Local: p.online.local, Remote: remote,
		CloseTimeout: p.closeTimeout, MaxMessage: maxMessage,
		Hooks: endpoint.Hooks{
			Emit: func(b []byte) {
				if err := c.tc.WriteTo(b, remote); err != nil {
					c.log.Debug().Err(err).Stringer("remote", remote).Msg("raknet: write failed")
				}
			},
			Up: func() {
				if c.listener != nil {
					c.listener.ready(c)
				}
			},
			Ended: c.ended,
		},
	})
	return c, nil
}

// ended releases what the connection holds once it has ended.
func (c *Conn) ended(err error) {
	if c.listener != nil {
		c.listener.remove(c)
	}
	if c.ownsTC {
		c.tc.Close()
	}
	if err != nil {
		c.log.Debug().Err(err).Stringer("remote", c.o.cfg.remote).Msg("raknet: connection ended")
	}
	if c.loop != nil {
		c.loop.StopSoon()
	}
}

// receive handles a datagram from the peer.
func (c *Conn) receive(b []byte) {
	c.ep.Locked(func(core *endpoint.Core, now time.Time) { core.Receive(b, now) })
}

// abort ends the connection at once, without a goodbye, and waits for it
// to finish. Err reports err unless it had ended already.
func (c *Conn) abort(err error) { c.ep.Abort(err) }

func (c *Conn) isUp() bool { return c.ep.IsUp() }

// Read reads bytes of the next user message into b. See Conn for how
// messages map to reads. It returns io.EOF after the peer closed the
// connection and everything it sent before has been read. A message that
// fits b is copied once, from the engine into b, with no allocation.
func (c *Conn) Read(b []byte) (int, error) { return c.ep.Read(b) }

// ReadMessage returns the next user message whole, with the reliability
// and channel it arrived with. After a partial Read it returns the rest of
// that message. It honours the read deadline and returns io.EOF like
// Read. The returned Data is the caller's, which costs an allocation per
// message; ReadMessageInto reuses a buffer instead.
func (c *Conn) ReadMessage() (Message, error) { return c.ep.ReadMessage() }

// ReadMessageInto is ReadMessage copying the message into buf: Data is
// buf[:len(message)] when buf has the capacity, otherwise a new buffer
// (pass it back in next time). A reader that reuses a large enough buffer
// allocates nothing per message.
func (c *Conn) ReadMessageInto(buf []byte) (Message, error) { return c.ep.ReadMessageInto(buf) }

// Write sends b as a reliable-ordered message on channel 0 (several if b
// is longer than the maximum message size). It blocks while the send
// queue is full, until the write deadline.
func (c *Conn) Write(b []byte) (int, error) { return c.ep.Write(b) }

// WriteMessage sends msg with the given reliability, ordering channel
// (0..31) and priority. For the three receipt kinds it returns a receipt
// number that ReadReceipt later reports; otherwise 0. msg is copied. It
// blocks while the send queue is full, until the write deadline.
// Argument errors are reliability's (reliability.ErrInvalidChannel, ...).
func (c *Conn) WriteMessage(msg []byte, r reliability.Reliability, channel uint8, prio reliability.Priority) (uint32, error) {
	return c.ep.Send(msg, r, channel, prio)
}

// ReadReceipt waits for the outcome of a message sent with a receipt
// kind: reliability.EventAcked or, for UnreliableWithAckReceipt,
// reliability.EventLost. At most 4096 outcomes are kept; older ones are
// dropped when nobody reads them.
func (c *Conn) ReadReceipt(ctx context.Context) (reliability.Event, error) {
	return c.ep.ReadReceipt(ctx)
}

// Close closes the connection gracefully; see Conn. It blocks until the
// peer has acknowledged everything sent, or the close timeout passes. If
// the peer closed first, Close returns at once and the connection keeps
// acknowledging the peer's resends in the background for a short while,
// in case our ACK of its goodbye was lost (see Done).
// Blocked reads and writes return at once. It returns nil; later calls
// wait for the first to finish and return nil too.
func (c *Conn) Close() error { return c.ep.Close() }

// Done returns a channel closed when the connection has ended: after
// Close, after the peer closed it and the connection stopped lingering,
// or when it was lost. A connection whose peer closed lingers after the
// peer's latest datagram for a few retransmission timeouts, longer after
// recent loss, when the peer may have backed off, so that the peer's
// resends of its goodbye are still acknowledged.
func (c *Conn) Done() <-chan struct{} { return c.ep.Done() }

// Err reports why the connection ended: nil while it is open or after a
// local Close, ErrPeerClosed, ErrConnectionLost or ErrHandshakeTimeout.
func (c *Conn) Err() error { return c.ep.Err() }

// LocalAddr returns the local UDP address.
func (c *Conn) LocalAddr() net.Addr { return c.ep.LocalAddr() }

// RemoteAddr returns the peer's UDP address.
func (c *Conn) RemoteAddr() net.Addr { return c.ep.RemoteAddr() }

// RemoteGUID is the peer's RakNet GUID.
func (c *Conn) RemoteGUID() uint64 { return c.remoteGUID }

// Protocol is the RakNet protocol version of the connection.
func (c *Conn) Protocol() uint8 { return c.o.cfg.protocol }

// MTU is the negotiated MTU.
func (c *Conn) MTU() int { return c.o.cfg.engine.MTU }

// SetDeadline sets the read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error { return c.ep.SetDeadline(t) }

// SetReadDeadline sets the deadline for Read and ReadMessage; the zero
// time means none.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.ep.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline for Write and WriteMessage; the zero
// time means none.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.ep.SetWriteDeadline(t) }

// RTT returns the round-trip time: the reliability engine's smoothed RTT,
// or before the first acknowledgement the RTT of the latest connected
// ping.
func (c *Conn) RTT() time.Duration { return c.ep.RTT() }

// Latency returns half the RTT, the one-way delay as RakNet reports it.
func (c *Conn) Latency() time.Duration { return c.RTT() / 2 }

// Stats returns the reliability engine's counters for this connection.
func (c *Conn) Stats() reliability.Stats { return c.ep.Stats() }

package session

import (
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/netcode"
	"github.com/netrak/netrak/reliability"
	"github.com/netrak/netrak/transport"
)

// Sizes of the combined stack. Each netcode payload packet carries exactly
// one RakNet datagram, so the engine's datagrams are at most
// netcode.MaxPayloadBytes long: the engine's MTU is that plus RakNet's
// UDP/IP allowance.
const (
	// MaxDatagram is the longest RakNet datagram a session sends: the
	// whole netcode payload.
	MaxDatagram = netcode.MaxPayloadBytes
	// EngineMTU is the reliability.Config.MTU that gives datagrams of
	// exactly MaxDatagram bytes.
	EngineMTU = MaxDatagram + reliability.UDPIPOverhead
)

// Defaults for zero config fields.
const (
	// DefaultCloseTimeout bounds a graceful Close: the time allowed for
	// the peer to acknowledge what is still queued.
	DefaultCloseTimeout = 3 * time.Second
	// DefaultReceiveBuffer bounds the bytes of messages a connection
	// holds for its reader, on top of what its engine holds.
	DefaultReceiveBuffer = 4 << 20
	// DefaultAcceptBacklog is how many connections may wait for Accept.
	DefaultAcceptBacklog = 256
	// MaxClients is the most client slots a server supports.
	MaxClients = 4096
)

// Errors of connections. Connection attempts also fail with netcode's
// errors (netcode.ErrConnectionDenied, netcode.ErrConnectTokenExpired,
// netcode.ErrConnectionRequestTimedOut, netcode.ErrConnectionResponseTimedOut,
// netcode.ErrInvalidConnectToken), which errors.Is matches.
var (
	// ErrPeerClosed is returned by writes after the peer disconnected.
	// Reads return io.EOF once what the peer sent before has been read.
	ErrPeerClosed = errors.New("session: connection closed by peer")
	// ErrTimedOut: nothing came from the peer for the connect token's
	// timeout.
	ErrTimedOut = errors.New("session: connection timed out")
	// ErrConnectionLost: reliable data went unacknowledged for the
	// reliability engine's dead timeout.
	ErrConnectionLost = errors.New("session: connection lost")
	// ErrServerClosed: the server disconnected the client, or shut down.
	ErrServerClosed = errors.New("session: disconnected by the server")
	// ErrBacklogFull: the server's accept backlog overflowed and the
	// connection was dropped.
	ErrBacklogFull = errors.New("session: accept backlog full")
	// ErrTransportFailed is wrapped, with the socket's last error, when
	// reads from a socket kept failing and the session gave up on it.
	ErrTransportFailed = netcode.ErrTransportFailed
)

// ConnConfig holds the settings of each connection, on either side.
type ConnConfig struct {
	// Reliability configures each connection's engine. Its MTU is always
	// EngineMTU: one datagram fills one netcode payload.
	Reliability reliability.Config
	// CloseTimeout bounds a graceful Close; 0 means DefaultCloseTimeout.
	CloseTimeout time.Duration
	// ReceiveBuffer bounds the bytes of messages waiting for the reader;
	// 0 means DefaultReceiveBuffer. Past it and the engine's own bound,
	// the engine stops acknowledging and the peer slows down.
	ReceiveBuffer int
}

// ServerConfig configures a Listener. Netcode.ProtocolID, PrivateKey and
// (for a server bound to a wildcard address) PublicAddress are required;
// every other zero field takes a default.
type ServerConfig struct {
	// Netcode configures the netcode server: protocol id, private key,
	// public address, slots (MaxClients, at most 4096), token history.
	Netcode netcode.ServerConfig
	ConnConfig
	// AcceptBacklog bounds connections waiting for Accept; past it, new
	// clients are disconnected. 0 means DefaultAcceptBacklog.
	AcceptBacklog int
	// Logger receives debug-level connection events; the zero value is
	// silent. It replaces Netcode.Logger and is the engines' logger too.
	Logger zerolog.Logger
}

// ClientConfig configures Dial. The zero value is ready to use.
type ClientConfig struct {
	// Conn, if set, is the endpoint to connect from (a transport/simnet
	// endpoint in tests, say). The connection owns it and closes it when
	// it ends. If nil, Dial opens a UDP socket on an ephemeral port.
	Conn transport.Conn
	// Netcode configures the netcode client.
	Netcode netcode.ClientConfig
	ConnConfig
	// Logger receives debug-level connection events; the zero value is
	// silent. It replaces Netcode.Logger and is the engine's logger too.
	Logger zerolog.Logger
}

// engineConfig is a connection's reliability configuration.
func (c *ConnConfig) engineConfig(log zerolog.Logger) reliability.Config {
	e := c.Reliability
	e.MTU = EngineMTU
	e.Logger = log
	return e
}

func (c *ConnConfig) defaults() {
	if c.CloseTimeout <= 0 {
		c.CloseTimeout = DefaultCloseTimeout
	}
	if c.ReceiveBuffer <= 0 {
		c.ReceiveBuffer = DefaultReceiveBuffer
	}
}

// maxMessage is the longest message Write puts in one engine message.
func (c *ConnConfig) maxMessage() int {
	e := c.Reliability
	if e.MaxMessageSize > 0 {
		return e.MaxMessageSize
	}
	q := e.MaxQueueBytes
	if q <= 0 {
		q = reliability.DefaultMaxQueueBytes
	}
	return min(reliability.DefaultMaxMessageSize, q)
}

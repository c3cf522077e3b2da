package netcode

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/rs/zerolog"
)

// ClientState is the state of a Client. Negative states are the error
// states a connection attempt can end in; 0 is disconnected; positive
// states are the stages of connecting, ending in ClientConnected.
type ClientState int8

// The ten client states of netcode 1.02, with the standard's numbers.
const (
	ClientConnectTokenExpired        ClientState = -6
	ClientInvalidConnectToken        ClientState = -5
	ClientConnectionTimedOut         ClientState = -4
	ClientConnectionResponseTimedOut ClientState = -3
	ClientConnectionRequestTimedOut  ClientState = -2
	ClientConnectionDenied           ClientState = -1
	ClientDisconnected               ClientState = 0
	ClientSendingConnectionRequest   ClientState = 1
	ClientSendingConnectionResponse  ClientState = 2
	ClientConnected                  ClientState = 3
)

var clientStateNames = [...]string{
	"connect token expired", "invalid connect token", "connection timed out",
	"connection response timed out", "connection request timed out",
	"connection denied", "disconnected", "sending connection request",
	"sending connection response", "connected",
}

func (s ClientState) String() string {
	if s >= ClientConnectTokenExpired && s <= ClientConnected {
		return clientStateNames[int(s)-int(ClientConnectTokenExpired)]
	}
	return fmt.Sprintf("ClientState(%d)", int8(s))
}

// Connecting reports whether s is one of the two handshake states.
func (s ClientState) Connecting() bool {
	return s == ClientSendingConnectionRequest || s == ClientSendingConnectionResponse
}

// Errors for the client's terminal states, returned by ClientState.Err and
// by Dial.
var (
	ErrConnectTokenExpired        = errors.New("netcode: connect token expired before a server accepted the connection")
	ErrInvalidConnectToken        = errors.New("netcode: invalid connect token")
	ErrConnectionTimedOut         = errors.New("netcode: connection timed out")
	ErrConnectionResponseTimedOut = errors.New("netcode: connection response timed out")
	ErrConnectionRequestTimedOut  = errors.New("netcode: connection request timed out")
	ErrConnectionDenied           = errors.New("netcode: connection denied (server full)")
	// ErrDisconnected: the client is disconnected, by its own Disconnect or
	// by the server.
	ErrDisconnected = errors.New("netcode: disconnected")
)

// Errors the client returns for API misuse.
var (
	// ErrNotConnected: SendPayload while the client is not connected.
	ErrNotConnected = errors.New("netcode: client not connected")
	// ErrAlreadyConnecting: Connect while connecting or connected.
	ErrAlreadyConnecting = errors.New("netcode: client already connecting or connected; call Disconnect first")
)

// Err returns the error that describes s: nil for the connecting and
// connected states, ErrDisconnected for ClientDisconnected, and one of the
// state errors above for the negative states.
func (s ClientState) Err() error {
	switch s {
	case ClientConnectTokenExpired:
		return ErrConnectTokenExpired
	case ClientInvalidConnectToken:
		return ErrInvalidConnectToken
	case ClientConnectionTimedOut:
		return ErrConnectionTimedOut
	case ClientConnectionResponseTimedOut:
		return ErrConnectionResponseTimedOut
	case ClientConnectionRequestTimedOut:
		return ErrConnectionRequestTimedOut
	case ClientConnectionDenied:
		return ErrConnectionDenied
	case ClientDisconnected:
		return ErrDisconnected
	}
	return nil
}

// ClientDropReason says why a Client ignored a packet (or could not queue
// one). A Server counts its own drops by ServerDropReason.
type ClientDropReason uint8

// Reasons the client drops packets.
const (
	ClientDropIdle             ClientDropReason = iota // client neither connecting nor connected
	ClientDropAddress                                  // not from the server the client is talking to
	ClientDropPacketSize                               // impossible size, before or after decryption
	ClientDropPacketType                               // invalid type, or one a client never accepts (request, response)
	ClientDropSequenceBytes                            // sequence length outside [1,8]
	ClientDropReplayed                                 // replay window rejected the sequence
	ClientDropDecrypt                                  // packet failed to authenticate
	ClientDropUnexpected                               // valid packet the current state has no use for
	ClientDropReceiveQueueFull                         // received payload queue full (not drained)
	ClientDropOutboxFull                               // outgoing datagram queue full (not drained)
	NumClientDropReasons                               // number of reasons, for sizing arrays
)

var clientDropReasonNames = [NumClientDropReasons]string{
	"idle", "address", "packet size", "packet type", "sequence bytes",
	"replayed", "decrypt", "unexpected", "receive queue full", "outbox full",
}

func (r ClientDropReason) String() string {
	if r < NumClientDropReasons {
		return clientDropReasonNames[r]
	}
	return "unknown"
}

// ClientDropCounts counts a client's drops by reason, indexed by
// ClientDropReason.
type ClientDropCounts [NumClientDropReasons]uint64

// Total is the sum over all reasons.
func (d *ClientDropCounts) Total() uint64 {
	return sum(d[:])
}

// ClientStats are the counters a Client keeps since NewClient. A server's
// counters for the client in one of its slots are SlotStats.
type ClientStats struct {
	PacketsReceived uint64 // datagrams handed to Receive
	BytesReceived   uint64
	PacketsSent     uint64 // datagrams queued for sending
	BytesSent       uint64

	RequestsSent       uint64
	ResponsesSent      uint64
	ChallengesReceived uint64
	DeniedReceived     uint64
	KeepAlivesSent     uint64
	KeepAlivesReceived uint64
	PayloadsSent       uint64
	PayloadsReceived   uint64
	DisconnectsSent    uint64
	// ServerFailovers counts moves to the next server address of a token.
	ServerFailovers uint64
	Connects        uint64

	Dropped ClientDropCounts
}

// DefaultClientOutboxSize is the default of ClientConfig.OutboxSize.
const DefaultClientOutboxSize = 1024

// ClientConfig configures a Client. The zero value is ready to use.
type ClientConfig struct {
	// ProtocolID, if not zero, is the only protocol id accepted in connect
	// tokens; a token for another protocol is an invalid connect token.
	// Zero accepts the token's protocol id.
	ProtocolID uint64
	// ReceiveQueueSize bounds the queue of received payloads; payloads
	// arriving when it is full are dropped. Zero means
	// DefaultReceiveQueueSize (256).
	ReceiveQueueSize int
	// OutboxSize bounds the datagrams queued between two calls to
	// Outgoing. Zero means DefaultClientOutboxSize (1024).
	OutboxSize int
	// Logger receives debug-level state changes. The zero value is silent.
	Logger zerolog.Logger
}

// Client is the sans-I/O netcode client core. It never touches a socket or
// a clock: the driver hands it datagrams from the network with Receive,
// calls Update every tick of a game loop or at the time NextTimeout names,
// and sends what Outgoing returns to the address each Datagram names. The
// application drains ReceivePayload. A Client is not safe for concurrent
// use; ClientConn wraps one for goroutines.
type Client struct {
	cfg        ClientConfig
	log        zerolog.Logger
	queueSize  int
	state      ClientState
	now        time.Time
	token      ConnectToken
	serverIdx  int
	server     netip.AddrPort
	send, recv *PacketCipher
	sequence   uint64
	replay     ReplayProtection

	connectStart time.Time
	lifetime     time.Duration // expire - create of the token
	timeout      time.Duration // zero or negative: timeouts disabled
	lastSend     time.Time
	lastRecv     time.Time

	challengeSeq   uint64
	challengeToken [ChallengeTokenBytes]byte
	clientIndex    int
	maxClients     int

	out outbox

	payloads payloadQueue // received, for ReceivePayload

	stats ClientStats
	pkt   Packet
}

// NewClient returns a disconnected client.
func NewClient(cfg ClientConfig) (*Client, error) {
	if cfg.ReceiveQueueSize < 0 {
		return nil, fmt.Errorf("netcode: negative ReceiveQueueSize %d", cfg.ReceiveQueueSize)
	}
	if cfg.OutboxSize < 0 {
		return nil, fmt.Errorf("netcode: negative OutboxSize %d", cfg.OutboxSize)
	}
	c := &Client{cfg: cfg, log: cfg.Logger, queueSize: cfg.ReceiveQueueSize, out: outbox{max: cfg.OutboxSize}, clientIndex: -1}
	if c.queueSize == 0 {
		c.queueSize = DefaultReceiveQueueSize
	}
	if c.out.max == 0 {
		c.out.max = DefaultClientOutboxSize
	}
	return c, nil
}

// State is the client's current state.
func (c *Client) State() ClientState { return c.state }

// ClientIndex is the slot the server gave this client, from its
// keep-alive, or -1 when not connected.
func (c *Client) ClientIndex() int {
	if c.state != ClientConnected {
		return -1
	}
	return c.clientIndex
}

// MaxClients is the server's slot count from its keep-alive, or 0 when
// not connected.
func (c *Client) MaxClients() int {
	if c.state != ClientConnected {
		return 0
	}
	return c.maxClients
}

// ServerAddress is the address of the server the client is connecting or
// connected to (invalid when it is neither).
func (c *Client) ServerAddress() netip.AddrPort {
	if c.state <= ClientDisconnected {
		return netip.AddrPort{}
	}
	return c.server
}

// Stats returns the client's counters.
func (c *Client) Stats() ClientStats { return c.stats }

// Connect starts connecting with a 2048-byte connect token, to the first
// of its server addresses. A token that fails validation (size, version,
// 1 to 32 server addresses of type IPv4 or IPv6, create timestamp not
// after expire timestamp, and ClientConfig.ProtocolID if set) puts the
// client in ClientInvalidConnectToken and returns an error wrapping
// ErrInvalidConnectToken. The token has until now + (expire - create) to
// get the client connected; the client's clock, not its agreement with
// the token's timestamps, decides. Payloads received in an earlier
// connection and not yet drained are discarded.
func (c *Client) Connect(token []byte, now time.Time) error {
	c.now = now
	if c.state > ClientDisconnected {
		return ErrAlreadyConnecting
	}
	c.payloads.discard()
	if _, err := ParseConnectToken(token, &c.token); err != nil {
		c.setState(ClientInvalidConnectToken)
		return fmt.Errorf("%w: %w", ErrInvalidConnectToken, err)
	}
	if c.cfg.ProtocolID != 0 && c.token.ProtocolID != c.cfg.ProtocolID {
		c.setState(ClientInvalidConnectToken)
		return fmt.Errorf("%w: %w", ErrInvalidConnectToken, ErrProtocolID)
	}
	c.send = NewPacketCipher(c.token.ClientToServerKey, c.token.ProtocolID)
	c.recv = NewPacketCipher(c.token.ServerToClientKey, c.token.ProtocolID)
	c.sequence = 0
	c.connectStart = now
	c.lifetime = time.Duration(math.MaxInt64)
	if life := c.token.ExpireTimestamp - c.token.CreateTimestamp; life < math.MaxInt64/uint64(time.Second) {
		c.lifetime = time.Duration(life) * time.Second
	}
	c.timeout = time.Duration(c.token.TimeoutSeconds) * time.Second
	c.connectTo(0, now)
	return nil
}

// connectTo starts the handshake with server address i of the token. The
// packet sequence continues across servers rather than restarting at 0,
// so no nonce is used twice under the token's client-to-server key.
func (c *Client) connectTo(i int, now time.Time) {
	c.serverIdx = i
	c.server = c.token.ServerAddresses[i]
	c.replay.Reset()
	c.clientIndex, c.maxClients = -1, 0
	c.lastRecv = now
	c.setState(ClientSendingConnectionRequest)
	c.sendRequest(now)
}

// failover moves to the next server address after a failure in a
// handshake state, or enters the error state if there is none left.
func (c *Client) failover(errState ClientState, now time.Time) {
	if c.serverIdx+1 < len(c.token.ServerAddresses) {
		c.stats.ServerFailovers++
		c.log.Debug().Stringer("failed", c.server).Stringer("reason", errState).Msg("netcode client trying next server")
		c.connectTo(c.serverIdx+1, now)
		return
	}
	c.setState(errState)
}

func (c *Client) setState(s ClientState) {
	if s == c.state {
		return
	}
	c.log.Debug().Stringer("from", c.state).Stringer("to", s).Stringer("server", c.server).Msg("netcode client state")
	c.state = s
}

// Update advances the client to now: it ends a handshake whose token has
// expired, times out a silent server (trying the next server address while
// connecting), and sends connection requests, challenge responses and idle
// keep-alives at 10 Hz.
func (c *Client) Update(now time.Time) {
	c.now = now
	if c.state <= ClientDisconnected {
		return
	}
	if c.state != ClientConnected && !now.Before(c.connectStart.Add(c.lifetime)) {
		c.setState(ClientConnectTokenExpired)
		return
	}
	if c.timeout > 0 && !now.Before(c.lastRecv.Add(c.timeout)) {
		switch c.state {
		case ClientSendingConnectionRequest:
			c.failover(ClientConnectionRequestTimedOut, now)
		case ClientSendingConnectionResponse:
			c.failover(ClientConnectionResponseTimedOut, now)
		case ClientConnected:
			c.setState(ClientConnectionTimedOut)
		}
		return
	}
	if now.Before(c.lastSend.Add(KeepAliveInterval)) {
		return
	}
	switch c.state {
	case ClientSendingConnectionRequest:
		c.sendRequest(now)
	case ClientSendingConnectionResponse:
		c.sendResponse(now)
	case ClientConnected:
		c.sendKeepAlive(now)
	}
}

// NextTimeout is the time by which Update must next be called for the
// client to behave exactly as if Update ran continuously: the earliest of
// the next request, response or keep-alive (KeepAliveInterval after the
// last packet sent), the timeout (last receive + the token's timeout) and,
// until connected, the token's expiry. It is zero while the client is
// disconnected or in an error state, when only Connect can start
// anything.
//
// Every deadline is derived from the state at the time of asking, so
// NextTimeout is never stale: after Receive, SendPayload, Connect or
// Disconnect the answer already reflects them. Calling Update earlier is
// harmless; it does nothing but note the time.
func (c *Client) NextTimeout() time.Time {
	if c.state <= ClientDisconnected {
		return time.Time{}
	}
	next := c.lastSend.Add(KeepAliveInterval)
	if c.timeout > 0 {
		next = earliest(next, c.lastRecv.Add(c.timeout))
	}
	if c.state != ClientConnected {
		next = earliest(next, c.connectStart.Add(c.lifetime))
	}
	return next
}

// advance brings the client's clock to now for an API call that stamps
// the time it runs at (SendPayload), as a continuously updated client's
// clock would be, running Update first if something is due by then.
func (c *Client) advance(now time.Time) {
	if next := c.NextTimeout(); !next.IsZero() && !now.Before(next) {
		c.Update(now)
		return
	}
	c.now = now
}

// Receive processes one datagram from the network at time now. It may
// modify pkt (packets are decrypted in place) and does not retain it.
// Nothing the sender does produces an error: bad packets are counted in
// Stats().Dropped and ignored.
func (c *Client) Receive(pkt []byte, from netip.AddrPort, now time.Time) {
	c.now = now
	c.stats.PacketsReceived++
	c.stats.BytesReceived += uint64(len(pkt))
	if c.state <= ClientDisconnected {
		c.drop(ClientDropIdle)
		return
	}
	if !sameAddress(from, c.server) {
		c.drop(ClientDropAddress)
		return
	}
	p := &c.pkt
	if _, err := ParsePacket(pkt, c.recv, ClientReceives, &c.replay, p); err != nil {
		c.drop(clientDropReason(err))
		return
	}
	switch {
	case p.Type == ConnectionDenied && c.state.Connecting():
		c.stats.DeniedReceived++
		c.failover(ClientConnectionDenied, now)
	case p.Type == ConnectionChallenge && c.state == ClientSendingConnectionRequest:
		c.stats.ChallengesReceived++
		c.challengeSeq = p.ChallengeSequence
		c.challengeToken = p.ChallengeToken
		c.lastRecv = now
		c.setState(ClientSendingConnectionResponse)
		c.sendResponse(now)
	case p.Type == ConnectionKeepAlive && c.state == ClientSendingConnectionResponse:
		c.stats.KeepAlivesReceived++
		c.lastRecv = now
		c.clientIndex = int(p.ClientIndex)
		c.maxClients = int(p.MaxClients)
		c.stats.Connects++
		c.setState(ClientConnected)
		c.log.Debug().Int("client_index", c.clientIndex).Int("max_clients", c.maxClients).Msg("netcode client connected")
	case p.Type == ConnectionKeepAlive && c.state == ClientConnected:
		c.stats.KeepAlivesReceived++
		c.lastRecv = now
	case p.Type == ConnectionPayload && c.state == ClientConnected:
		c.lastRecv = now
		c.enqueue(p.Sequence, p.Payload)
		p.Payload = nil
	case p.Type == ConnectionDisconnect && c.state == ClientConnected:
		c.lastRecv = now
		c.setState(ClientDisconnected)
	default:
		// Payloads before connected, a second challenge, a late denied:
		// authentic, but nothing to do with them now.
		c.drop(ClientDropUnexpected)
	}
}

func clientDropReason(err error) ClientDropReason {
	switch err {
	case ErrPacketSize:
		return ClientDropPacketSize
	case ErrPacketType:
		return ClientDropPacketType
	case ErrSequenceBytes:
		return ClientDropSequenceBytes
	case ErrReplayed:
		return ClientDropReplayed
	default:
		return ClientDropDecrypt
	}
}

func (c *Client) drop(r ClientDropReason) { c.stats.Dropped[r]++ }

func (c *Client) enqueue(seq uint64, payload []byte) {
	if !c.payloads.push(c.queueSize, seq, payload) {
		c.drop(ClientDropReceiveQueueFull)
		return
	}
	c.stats.PayloadsReceived++
}

// ReceivePayload pops the oldest payload received from the server, with the
// packet sequence number it arrived with. The payload is valid until the
// next call to Receive or Connect. Payloads received before a disconnect
// stay available until then.
func (c *Client) ReceivePayload() (payload []byte, sequence uint64, ok bool) {
	return c.payloads.pop()
}

// SendPayload queues one payload (1 to MaxPayloadBytes bytes) for the
// server. It fails with ErrNotConnected unless the client is connected,
// and with ErrPayloadSize for an empty or oversized payload.
func (c *Client) SendPayload(payload []byte) error {
	if c.state != ClientConnected {
		return ErrNotConnected
	}
	if len(payload) < 1 || len(payload) > MaxPayloadBytes {
		return ErrPayloadSize
	}
	c.pkt = Packet{Type: ConnectionPayload, Payload: payload}
	if c.sendPacket(&c.pkt, c.now) {
		c.stats.PayloadsSent++
	}
	c.pkt.Payload = nil
	return nil
}

// Disconnect leaves the server at time now. A connected client first
// queues RedundantDisconnectCount disconnect packets (still to be sent
// from Outgoing); a connecting client just stops. The client ends in
// ClientDisconnected and may Connect again, with a new token: a server
// accepts each token for one session only.
func (c *Client) Disconnect(now time.Time) {
	c.now = now
	if c.state == ClientConnected {
		for range RedundantDisconnectCount {
			c.pkt = Packet{Type: ConnectionDisconnect}
			if c.sendPacket(&c.pkt, now) {
				c.stats.DisconnectsSent++
			}
		}
	}
	if c.state > ClientDisconnected {
		c.setState(ClientDisconnected)
	}
}

// Outgoing returns the datagrams queued since the last call, for the driver
// to send. The slice and the bytes it points to are valid until the next
// call to Outgoing.
func (c *Client) Outgoing() []Datagram { return c.out.take() }

func (c *Client) reserve() bool {
	if c.out.full() {
		c.drop(ClientDropOutboxFull)
		return false
	}
	return true
}

func (c *Client) queued(n int) {
	c.stats.PacketsSent++
	c.stats.BytesSent += uint64(n)
}

func (c *Client) sendRequest(now time.Time) {
	if !c.reserve() {
		return
	}
	r := RequestPacket{
		ProtocolID:      c.token.ProtocolID,
		ExpireTimestamp: c.token.ExpireTimestamp,
		TokenNonce:      c.token.Nonce,
		TokenData:       c.token.PrivateData,
	}
	c.queued(c.out.request(&r, c.server))
	c.lastSend = now
	c.stats.RequestsSent++
}

func (c *Client) sendResponse(now time.Time) {
	c.pkt = Packet{Type: ConnectionResponse, ChallengeSequence: c.challengeSeq, ChallengeToken: c.challengeToken}
	if c.sendPacket(&c.pkt, now) {
		c.stats.ResponsesSent++
	}
}

func (c *Client) sendKeepAlive(now time.Time) {
	// The client's keep-alive carries no meaningful index; the reference
	// sends zeros, and servers ignore the fields.
	c.pkt = Packet{Type: ConnectionKeepAlive}
	if c.sendPacket(&c.pkt, now) {
		c.stats.KeepAlivesSent++
	}
}

// sendPacket seals p under the next sequence number and queues it for the
// current server.
func (c *Client) sendPacket(p *Packet, now time.Time) bool {
	if !c.reserve() {
		return false
	}
	p.Sequence = c.sequence
	c.sequence++
	c.queued(c.out.packet(p, c.send, c.server))
	c.lastSend = now
	return true
}

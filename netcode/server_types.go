package netcode

import (
	"errors"
	"net/netip"
	"time"
)

// Errors the server returns for API misuse.
var (
	ErrClientNotConnected = errors.New("netcode: no client connected in that slot")
	ErrServerNotRunning   = errors.New("netcode: server not running")
	ErrServerRunning      = errors.New("netcode: server already running")
	// ErrClientIndex: a slot index outside [0, MaxClients).
	ErrClientIndex = errors.New("netcode: client index out of range")
	// ErrSlotOccupied: ConnectLoopbackClient on a slot that holds a client.
	ErrSlotOccupied = errors.New("netcode: client slot already occupied")
	// ErrClientIDConnected: ConnectLoopbackClient with the client id of a
	// client already connected.
	ErrClientIDConnected = errors.New("netcode: client id already connected")
	// ErrLoopbackClient: SendPayload to a loopback client, whose traffic
	// the application delivers itself.
	ErrLoopbackClient = errors.New("netcode: client is a loopback client")
	// ErrNotLoopbackClient: DisconnectLoopbackClient on a network client.
	ErrNotLoopbackClient = errors.New("netcode: client is not a loopback client")
)

// ServerDropReason says why a Server ignored a packet (or could not queue
// one). A Client counts its own drops by ClientDropReason.
type ServerDropReason uint8

// Reasons the server drops packets, roughly in the order the checks run.
const (
	ServerDropNotRunning        ServerDropReason = iota // server stopped
	ServerDropPacketSize                                // impossible size, before or after decryption
	ServerDropPacketType                                // invalid type, or one a server never accepts (denied, challenge)
	ServerDropSequenceBytes                             // sequence length outside [1,8]
	ServerDropVersion                                   // request with other version info
	ServerDropProtocolID                                // request for another protocol id
	ServerDropTokenExpired                              // request whose token has expired
	ServerDropTokenTooOld                               // request whose token was minted before this start (restart rule)
	ServerDropTokenDecrypt                              // private token failed to authenticate
	ServerDropTokenInvalid                              // private token decrypted but did not parse
	ServerDropServerAddress                             // this server's public address is not in the token
	ServerDropAddressConnected                          // handshake packet from an address that is already connected
	ServerDropClientIDConnected                         // handshake for a client id that is already connected
	ServerDropTokenReused                               // token already used from another address, or already consumed
	ServerDropTokenHistoryFull                          // token history full of unexpired tokens
	ServerDropMappingFull                               // no room for another encryption mapping
	ServerDropNoMapping                                 // encrypted packet from an address with no keys
	ServerDropNotConnected                              // keep-alive, payload or disconnect from a handshake not finished
	ServerDropReplayed                                  // replay window rejected the sequence
	ServerDropDecrypt                                   // packet failed to authenticate
	ServerDropChallengeToken                            // challenge token failed to authenticate
	ServerDropReceiveQueueFull                          // client's received payload queue full
	ServerDropOutboxFull                                // outgoing datagram queue full (not drained)
	NumServerDropReasons                                // number of reasons, for sizing arrays
)

var serverDropReasonNames = [NumServerDropReasons]string{
	"not running", "packet size", "packet type", "sequence bytes", "version",
	"protocol id", "token expired", "token too old", "token decrypt", "token invalid",
	"server address", "address connected", "client id connected", "token reused",
	"token history full", "mapping full", "no mapping", "not connected", "replayed",
	"decrypt", "challenge token", "receive queue full", "outbox full",
}

func (r ServerDropReason) String() string {
	if r < NumServerDropReasons {
		return serverDropReasonNames[r]
	}
	return "unknown"
}

// ServerDropCounts counts a server's drops by reason, indexed by
// ServerDropReason: server-wide in ServerStats, and per slot in SlotStats.
type ServerDropCounts [NumServerDropReasons]uint64

// Total is the sum over all reasons.
func (d *ServerDropCounts) Total() uint64 {
	return sum(d[:])
}

// sum adds up a set of counters.
func sum(counts []uint64) uint64 {
	var n uint64
	for _, v := range counts {
		n += v
	}
	return n
}

// ServerStats are the server-wide counters since NewServer.
type ServerStats struct {
	PacketsReceived uint64 // datagrams handed to Receive
	BytesReceived   uint64
	PacketsSent     uint64 // datagrams queued for sending
	BytesSent       uint64

	Requests       uint64 // connection requests that passed every check
	ChallengesSent uint64
	DeniedSent     uint64
	Connects       uint64
	Disconnects    uint64

	PayloadsReceived uint64
	PayloadsSent     uint64

	// EventsDropped counts connect and disconnect events discarded, oldest
	// first, because the application did not drain Events (or NextEvent)
	// and the queue reached 4*MaxClients+64.
	EventsDropped uint64

	Dropped ServerDropCounts
}

// SlotStats are the counters a Server keeps for one client slot, reset when
// a client takes the slot; ClientInfo.Stats reports them. The client end of
// a connection counts its own in ClientStats.
type SlotStats struct {
	PacketsReceived    uint64
	PacketsSent        uint64
	PayloadsReceived   uint64
	PayloadsSent       uint64
	KeepAlivesReceived uint64
	KeepAlivesSent     uint64
	Dropped            ServerDropCounts
}

// ClientInfo describes the client in a slot.
type ClientInfo struct {
	ClientID uint64
	Address  netip.AddrPort
	// UserData is the user data from the client's connect token.
	UserData [UserDataBytes]byte
	// Confirmed is set once the client has sent a keep-alive or payload,
	// proving it knows its slot; a loopback client is confirmed at once.
	Confirmed bool
	// Loopback marks a client connected with ConnectLoopbackClient, which
	// has no address and exchanges no packets.
	Loopback bool
	// Timeout is the connection timeout from the token; zero or negative
	// means timeouts are disabled.
	Timeout time.Duration
	Stats   SlotStats
}

// EventKind says what happened to a client slot.
type EventKind uint8

// Event kinds.
const (
	EventConnected EventKind = iota + 1
	EventDisconnected
)

func (k EventKind) String() string {
	switch k {
	case EventConnected:
		return "connected"
	case EventDisconnected:
		return "disconnected"
	}
	return "unknown"
}

// DisconnectReason says why a client left.
type DisconnectReason uint8

// Disconnect reasons.
const (
	ReasonNone               DisconnectReason = iota // for EventConnected
	ReasonTimedOut                                   // nothing received within the token's timeout
	ReasonClientDisconnected                         // the client sent a disconnect packet
	ReasonServerDisconnected                         // DisconnectClient, DisconnectLoopbackClient, DisconnectAll or Stop
)

func (r DisconnectReason) String() string {
	switch r {
	case ReasonNone:
		return "none"
	case ReasonTimedOut:
		return "timed out"
	case ReasonClientDisconnected:
		return "client disconnected"
	case ReasonServerDisconnected:
		return "server disconnected"
	}
	return "unknown"
}

// Event reports a client connecting or disconnecting.
type Event struct {
	Kind        EventKind
	ClientIndex int
	ClientID    uint64
	Address     netip.AddrPort
	Reason      DisconnectReason // for EventDisconnected
	// Loopback marks a loopback client's slot (ConnectLoopbackClient),
	// whose Address is the zero value.
	Loopback bool
}

// Datagram is one packet the server wants sent.
type Datagram struct {
	Data []byte
	Addr netip.AddrPort
}

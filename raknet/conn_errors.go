package raknet

import (
	"errors"
	"fmt"
	"github.com/netrak/netrak/internal/driver"
)

// Errors of connections. Refusals by a server come as *RefusedError or
// *IncompatibleProtocolError, which also match the sentinels below with
// errors.Is.
var (
	// ErrConnectionAttemptFailed: the server never answered the
	// open-connection handshake, or answered with "connection attempt
	// failed" (0x11).
	ErrConnectionAttemptFailed = errors.New("raknet: connection attempt failed")
	// ErrAlreadyConnected: the server already has a connection from this
	// address or GUID (0x12).
	ErrAlreadyConnected = errors.New("raknet: already connected")
	// ErrNoFreeIncomingConnections: the server is full (0x14).
	ErrNoFreeIncomingConnections = errors.New("raknet: no free incoming connections")
	// ErrConnectionBanned: the server banned this client (0x17).
	ErrConnectionBanned = errors.New("raknet: connection banned")
	// ErrIPRecentlyConnected: the server refuses connections this soon
	// after the last one from this IP (0x1a).
	ErrIPRecentlyConnected = errors.New("raknet: IP recently connected")
	// ErrIncompatibleProtocol: the server does not speak the protocol
	// version the client offered (0x19).
	ErrIncompatibleProtocol = errors.New("raknet: incompatible protocol version")
	// ErrHandshakeTimeout: the online handshake (connection request,
	// accepted, new incoming connection) did not finish in time.
	ErrHandshakeTimeout = errors.New("raknet: handshake timed out")
	// ErrConnectionLost: the peer stopped answering; nothing arrived for
	// the dead-connection timeout, or reliable data went unacknowledged.
	ErrConnectionLost = errors.New("raknet: connection lost")
	// ErrPeerClosed is returned by writes after the peer sent a
	// disconnection notification. Reads return io.EOF once the data
	// received before the notification has been read.
	ErrPeerClosed = errors.New("raknet: connection closed by peer")
	// ErrListenerFull: the listener's accept backlog overflowed and the
	// connection was dropped.
	ErrListenerFull = errors.New("raknet: accept backlog full")
	// ErrProtocolViolation: the peer sent something the handshake does not
	// allow, such as a reply that asks for libcat encryption.
	ErrProtocolViolation = errors.New("raknet: protocol violation")
)

// RefusedError is a server's refusal of a connection attempt with one of
// the Refusal identifiers. errors.Is matches it against the sentinel for
// its identifier (ErrAlreadyConnected, ErrNoFreeIncomingConnections, ...).
type RefusedError struct {
	ID         byte
	ServerGUID uint64
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("raknet: connection refused: %v (id %#02x)", e.sentinel(), e.ID)
}

func (e *RefusedError) sentinel() error {
	switch e.ID {
	case IDAlreadyConnected:
		return ErrAlreadyConnected
	case IDNoFreeIncomingConnections:
		return ErrNoFreeIncomingConnections
	case IDConnectionBanned:
		return ErrConnectionBanned
	case IDIPRecentlyConnected:
		return ErrIPRecentlyConnected
	}
	return ErrConnectionAttemptFailed
}

// Is reports whether target is the sentinel for e's identifier.
func (e *RefusedError) Is(target error) bool { return target == e.sentinel() }

// IncompatibleProtocolError is the server's answer to an offered protocol
// version it does not accept. errors.Is(err, ErrIncompatibleProtocol) holds.
type IncompatibleProtocolError struct {
	Offered    uint8 // what the client sent
	Server     uint8 // what the server says it speaks
	ServerGUID uint64
}

func (e *IncompatibleProtocolError) Error() string {
	return fmt.Sprintf("raknet: incompatible protocol version: offered %d, server speaks %d", e.Offered, e.Server)
}

// Is reports whether target is ErrIncompatibleProtocol.
func (e *IncompatibleProtocolError) Is(target error) bool { return target == ErrIncompatibleProtocol }

// ErrTransportFailed is wrapped, with the socket's last error, by the
// error a Listener (Accept) or a dialed Conn (Err) reports after reads
// from its socket failed again and again and it gave up.
var ErrTransportFailed = driver.ErrTransportFailed

package netcode

import "errors"

// Errors returned by the wire layer. Readers return these sentinels
// unwrapped, so rejecting a hostile packet never allocates; test them with
// errors.Is.
var (
	// ErrPacketSize: the datagram or its per-type data has a size no valid
	// packet of its type can have.
	ErrPacketSize = errors.New("netcode: invalid packet size")
	// ErrPacketType: the prefix byte names no packet type, or a type that is
	// not accepted in this direction.
	ErrPacketType = errors.New("netcode: invalid or unexpected packet type")
	// ErrSequenceBytes: the prefix byte gives a sequence length outside [1,8].
	ErrSequenceBytes = errors.New("netcode: invalid sequence length")
	// ErrVersion: the version info is not "NETCODE 1.02\x00".
	ErrVersion = errors.New("netcode: unsupported version")
	// ErrProtocolID: the protocol id differs from the expected one.
	ErrProtocolID = errors.New("netcode: protocol id mismatch")
	// ErrTokenExpired: the connect token's expire timestamp has passed.
	ErrTokenExpired = errors.New("netcode: connect token expired")
	// ErrReplayed: the sequence number was already received or is older than
	// the replay window.
	ErrReplayed = errors.New("netcode: replayed or stale packet")
	// ErrDecrypt: authentication failed (wrong key, nonce, associated data or
	// tampered bytes).
	ErrDecrypt = errors.New("netcode: decryption failed")
	// ErrNoCipher: an encrypted packet was read or written without a cipher.
	ErrNoCipher = errors.New("netcode: no cipher for encrypted packet")
	// ErrAddress: an address has an invalid type or cannot be encoded.
	ErrAddress = errors.New("netcode: invalid address")
	// ErrServerAddressCount: a token lists fewer than 1 or more than 32
	// server addresses.
	ErrServerAddressCount = errors.New("netcode: server address count not in [1,32]")
	// ErrTokenTimestamps: a connect token was created after it expires.
	ErrTokenTimestamps = errors.New("netcode: connect token create timestamp after expire timestamp")
	// ErrPayloadSize: a payload is empty or longer than MaxPayloadBytes.
	ErrPayloadSize = errors.New("netcode: payload size not in [1,1200]")
	// ErrKeySize: a key is not KeyBytes long.
	ErrKeySize = errors.New("netcode: key must be 32 bytes")
	// ErrTokenSize: an encoded connect token is not ConnectTokenBytes long.
	ErrTokenSize = errors.New("netcode: connect token must be 2048 bytes")
)

package netcode

import (
	"encoding/binary"
	"math/bits"
)

// Sizes and limits of netcode 1.02, as the C reference uses them.
const (
	// VersionInfo is the 13-byte version string, null terminator included,
	// that starts every connect token and connection request.
	VersionInfo = "NETCODE 1.02\x00"
	// VersionInfoBytes is len(VersionInfo).
	VersionInfoBytes = 13

	KeyBytes                  = 32   // AEAD key size
	MACBytes                  = 16   // Poly1305 tag size
	UserDataBytes             = 256  // user data carried in tokens
	ConnectTokenBytes         = 2048 // public connect token
	ConnectTokenPrivateBytes  = 1024 // private part, encrypted, tag included
	ConnectTokenNonceBytes    = 24   // XChaCha20-Poly1305 nonce of the private part
	ChallengeTokenBytes       = 300  // challenge token, encrypted, tag included
	MaxServersPerConnect      = 32   // server addresses per token
	MaxPayloadBytes           = 1200 // largest payload of a payload packet
	ReplayWindowSize          = 256  // entries of the replay protection window
	ConnectionRequestBytes    = 1 + VersionInfoBytes + 8 + 8 + ConnectTokenNonceBytes + ConnectTokenPrivateBytes
	challengeDataBytes        = 8 + ChallengeTokenBytes // per-packet data of challenge and response
	keepAliveDataBytes        = 8
	minEncryptedPacketBytes   = 1 + 1 + MACBytes
	maxEncryptedPacketBytes   = 1 + 8 + MaxPayloadBytes + MACBytes
	packetAssociatedDataBytes = VersionInfoBytes + 8 + 1
	tokenAssociatedDataBytes  = VersionInfoBytes + 8 + 8
)

// MaxPacketBytes is the largest datagram netcode 1.02 ever sends (a payload
// packet with an 8-byte sequence and a 1200-byte payload). Readers reject
// anything larger before doing any cryptography.
const MaxPacketBytes = maxEncryptedPacketBytes

// sequenceBytes is the number of bytes the variable-length encoding of seq
// takes: the minimum that holds it, and 1 for 0.
func sequenceBytes(seq uint64) int {
	n := (bits.Len64(seq) + 7) / 8
	if n == 0 {
		return 1
	}
	return n
}

// appendSequence writes the low n bytes of seq, low byte first.
func appendSequence(b []byte, seq uint64, n int) []byte {
	for range n {
		b = append(b, byte(seq))
		seq >>= 8
	}
	return b
}

// readSequence reads an n-byte little-endian sequence number; len(b) >= n.
func readSequence(b []byte, n int) uint64 {
	var seq uint64
	for i := n - 1; i >= 0; i-- {
		seq = seq<<8 | uint64(b[i])
	}
	return seq
}

// nonce96 writes the 96-bit nonce netcode uses with ChaCha20-Poly1305 IETF:
// four zero bytes, then the sequence number little-endian.
func nonce96(n *[12]byte, seq uint64) {
	n[0], n[1], n[2], n[3] = 0, 0, 0, 0
	binary.LittleEndian.PutUint64(n[4:], seq)
}

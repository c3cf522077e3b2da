package netcode

import (
	"encoding/binary"
	"slices"
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

// nonce96 writes the 96-bit nonce netcode uses with ChaCha20-Poly1305 IETF:
// four zero bytes, then the sequence number little-endian.
func nonce96(n *[12]byte, seq uint64) {
	n[0], n[1], n[2], n[3] = 0, 0, 0, 0
	binary.LittleEndian.PutUint64(n[4:], seq)
}

// appendZeros appends n zero bytes, without allocating when b has room.
func appendZeros(b []byte, n int) []byte {
	if n <= 0 {
		return b
	}
	b = slices.Grow(b, n)
	start := len(b)
	b = b[:start+n]
	clear(b[start:])
	return b
}

// reader decodes little-endian fields; the first short read sets err and
// every later read returns zeros.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = ErrPacketSize
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

func (r *reader) bytes(dst []byte) {
	if v := r.take(len(dst)); v != nil {
		copy(dst, v)
	}
}

package netcode

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// PacketType is the low 4 bits of a packet's prefix byte.
type PacketType uint8

// The seven packet types of netcode 1.02.
const (
	ConnectionRequest    PacketType = 0 // client to server, in the clear
	ConnectionDenied     PacketType = 1 // server to client
	ConnectionChallenge  PacketType = 2 // server to client
	ConnectionResponse   PacketType = 3 // client to server
	ConnectionKeepAlive  PacketType = 4 // both ways
	ConnectionPayload    PacketType = 5 // both ways
	ConnectionDisconnect PacketType = 6 // both ways
	numPacketTypes                  = 7
)

var packetTypeNames = [numPacketTypes]string{
	"connection request", "connection denied", "connection challenge",
	"connection response", "connection keep-alive", "connection payload",
	"connection disconnect",
}

func (t PacketType) String() string {
	if t < numPacketTypes {
		return packetTypeNames[t]
	}
	return "invalid packet type"
}

// PacketTypes is a set of packet types, used to say which types a reader
// accepts.
type PacketTypes uint8

// Has reports whether t is in s.
func (s PacketTypes) Has(t PacketType) bool { return t < numPacketTypes && s&(1<<t) != 0 }

// The packet types each side accepts. A server drops denied and challenge
// packets; a client drops requests and responses.
const (
	ServerReceives PacketTypes = 1<<ConnectionRequest | 1<<ConnectionResponse |
		1<<ConnectionKeepAlive | 1<<ConnectionPayload | 1<<ConnectionDisconnect
	ClientReceives PacketTypes = 1<<ConnectionDenied | 1<<ConnectionChallenge |
		1<<ConnectionKeepAlive | 1<<ConnectionPayload | 1<<ConnectionDisconnect
)

// RequestPacket is the connection request, the only packet sent in the
// clear: prefix 0, version info, then the fields below. Its size is always
// ConnectionRequestBytes (1078).
type RequestPacket struct {
	ProtocolID      uint64
	ExpireTimestamp uint64
	TokenNonce      [ConnectTokenNonceBytes]byte
	// TokenData is the sealed private connect token, copied from the
	// client's ConnectToken.PrivateData.
	TokenData [ConnectTokenPrivateBytes]byte
}

// Len is the encoded size of p, ConnectionRequestBytes for every request.
func (p *RequestPacket) Len() int { return ConnectionRequestBytes }

// Append appends the 1078-byte encoding of p to b. Every request encodes;
// the error is always nil.
func (p *RequestPacket) Append(b []byte) ([]byte, error) {
	b = slices.Grow(b, ConnectionRequestBytes)
	b = append(b, byte(ConnectionRequest))
	b = append(b, VersionInfo...)
	b = binary.LittleEndian.AppendUint64(b, p.ProtocolID)
	b = binary.LittleEndian.AppendUint64(b, p.ExpireTimestamp)
	b = append(b, p.TokenNonce[:]...)
	return append(b, p.TokenData[:]...), nil
}

// ParseRequestPacket decodes a connection request into p. A packet is a
// whole datagram, so b must be exactly the request's 1078 bytes, all of
// which it reports used. It rejects with the least work, in the standard's
// order: size, prefix, version info, protocolID, then expiry (the token's
// expire timestamp must be later than nowUnix). It writes nothing into p
// unless every check passes, and does no cryptography: opening p.TokenData
// is the caller's next step.
func ParseRequestPacket(b []byte, protocolID, nowUnix uint64, p *RequestPacket) (int, error) {
	if len(b) != ConnectionRequestBytes {
		return 0, ErrPacketSize
	}
	if b[0] != byte(ConnectionRequest) {
		return 0, ErrPacketType
	}
	if string(b[1:1+VersionInfoBytes]) != VersionInfo {
		return 0, ErrVersion
	}
	rest := b[1+VersionInfoBytes:]
	if binary.LittleEndian.Uint64(rest) != protocolID {
		return 0, ErrProtocolID
	}
	expire := binary.LittleEndian.Uint64(rest[8:])
	if expire <= nowUnix {
		return 0, ErrTokenExpired
	}
	p.ProtocolID = protocolID
	p.ExpireTimestamp = expire
	copy(p.TokenNonce[:], rest[16:])
	copy(p.TokenData[:], rest[16+ConnectTokenNonceBytes:])
	return ConnectionRequestBytes, nil
}

// Packet is an encrypted packet (types 1 to 6) in decoded form. Only the
// fields of its Type are encoded.
type Packet struct {
	Type     PacketType
	Sequence uint64

	// Challenge and response: the challenge token sequence and the sealed
	// challenge token.
	ChallengeSequence uint64
	ChallengeToken    [ChallengeTokenBytes]byte

	// Keep-alive: the client's slot and the server's slot count.
	ClientIndex uint32
	MaxClients  uint32

	// Payload: 1 to MaxPayloadBytes bytes. After ParsePacket it aliases the
	// datagram buffer.
	Payload []byte
}

// dataLen is the size of the per-type data, or -1 if p cannot be encoded.
func (p *Packet) dataLen() int { return dataLen(p.Type, len(p.Payload)) }

// dataLen is the size of the per-type data of a packet of type typ with
// payloadLen bytes of payload, or -1 if no valid packet has them. The
// writer and the reader share it so they agree on what is valid.
func dataLen(typ PacketType, payloadLen int) int {
	switch typ {
	case ConnectionDenied, ConnectionDisconnect:
		return 0
	case ConnectionChallenge, ConnectionResponse:
		return challengeDataBytes
	case ConnectionKeepAlive:
		return keepAliveDataBytes
	case ConnectionPayload:
		if payloadLen < 1 || payloadLen > MaxPayloadBytes {
			return -1
		}
		return payloadLen
	default:
		return -1
	}
}

// Len is the encoded size of p in bytes, or 0 if p cannot be encoded.
func (p *Packet) Len() int {
	n := p.dataLen()
	if n < 0 {
		return 0
	}
	return 1 + sequenceBytes(p.Sequence) + n + MACBytes
}

// Append encrypts p with c and appends it to b: the prefix byte (sequence
// length << 4 | type), the sequence in as few bytes as hold it, then the
// encrypted per-type data and its tag. When b has room it does not
// allocate.
func (p *Packet) Append(b []byte, c *PacketCipher) ([]byte, error) {
	n := p.dataLen()
	if n < 0 {
		if p.Type == ConnectionPayload {
			return b, ErrPayloadSize
		}
		return b, ErrPacketType
	}
	if c == nil {
		return b, ErrNoCipher
	}
	seqLen := sequenceBytes(p.Sequence)
	prefix := byte(seqLen<<4) | byte(p.Type)
	b = slices.Grow(b, 1+seqLen+n+MACBytes)
	b = append(b, prefix)
	b = appendSequence(b, p.Sequence, seqLen)
	start := len(b)
	switch p.Type {
	case ConnectionChallenge, ConnectionResponse:
		b = binary.LittleEndian.AppendUint64(b, p.ChallengeSequence)
		b = append(b, p.ChallengeToken[:]...)
	case ConnectionKeepAlive:
		b = binary.LittleEndian.AppendUint32(b, p.ClientIndex)
		b = binary.LittleEndian.AppendUint32(b, p.MaxClients)
	case ConnectionPayload:
		b = append(b, p.Payload...)
	}
	return c.sealInPlace(b, start, prefix, p.Sequence), nil
}

// ParsePacket authenticates, decrypts and decodes an encrypted packet into
// p, with c, which holds the packet key and protocol id; it accepts only
// the types in accept, and checks and advances replay unless it is nil. A
// packet is a whole datagram, so on success it reports all of b used. The
// datagram is decrypted in place, so b is modified and p.Payload aliases
// it. Fields that p's type does not carry are zeroed.
//
// The checks run cheapest first: size bounds, prefix type (in accept),
// sequence length, then, for keep-alive, payload and disconnect packets
// when replay is not nil, the replay window; then decryption; then the
// window advances (only after a successful decrypt); and last the
// decrypted per-type size. Without a cipher (c == nil) a packet that passes
// the cheap checks fails with ErrNoCipher. It writes nothing into p unless
// every check passes.
func ParsePacket(b []byte, c *PacketCipher, accept PacketTypes, replay *ReplayProtection, p *Packet) (int, error) {
	if len(b) < minEncryptedPacketBytes || len(b) > maxEncryptedPacketBytes {
		return 0, ErrPacketSize
	}
	prefix := b[0]
	typ := PacketType(prefix & 0x0f)
	if typ == ConnectionRequest || typ >= numPacketTypes || !accept.Has(typ) {
		return 0, ErrPacketType
	}
	seqLen := int(prefix >> 4)
	if seqLen < 1 || seqLen > 8 {
		return 0, ErrSequenceBytes
	}
	start := 1 + seqLen
	if len(b) < start+MACBytes {
		return 0, ErrPacketSize
	}
	seq := readSequence(b[1:], seqLen)
	replayed := typ >= ConnectionKeepAlive && replay != nil
	if replayed && replay.AlreadyReceived(seq) {
		return 0, ErrReplayed
	}
	if c == nil {
		return 0, ErrNoCipher
	}
	data, err := c.openInPlace(b, start, prefix, seq)
	if err != nil {
		return 0, err
	}
	if replayed {
		replay.Advance(seq)
	}
	if dataLen(typ, len(data)) != len(data) {
		return 0, ErrPacketSize
	}
	p.Type = typ
	p.Sequence = seq
	p.ChallengeSequence, p.ClientIndex, p.MaxClients, p.Payload = 0, 0, 0, nil
	switch typ {
	case ConnectionChallenge, ConnectionResponse:
		p.ChallengeSequence = binary.LittleEndian.Uint64(data)
		copy(p.ChallengeToken[:], data[8:])
		return len(b), nil
	case ConnectionKeepAlive:
		p.ClientIndex = binary.LittleEndian.Uint32(data)
		p.MaxClients = binary.LittleEndian.Uint32(data[4:])
	case ConnectionPayload:
		p.Payload = data
	}
	clear(p.ChallengeToken[:])
	return len(b), nil
}

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

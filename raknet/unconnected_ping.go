package raknet

import (
	"encoding/binary"
	"strconv"
)

// UnconnectedPing asks a server for its GUID and pong data without
// connecting. Layout: id, u64 BE send time, magic, u64 BE client GUID.
type UnconnectedPing struct {
	// OpenConnectionsOnly selects identifier 0x02, which a server answers
	// only while it accepts new connections, instead of 0x01.
	OpenConnectionsOnly bool
	// SendTime is echoed in the pong; RakNet puts its millisecond clock
	// here, but the value is opaque to the server.
	SendTime uint64
	// ClientGUID identifies the pinging peer. Old clients omit it; it then
	// parses as 0.
	ClientGUID uint64
}

const (
	unconnectedPingLen       = 1 + 8 + 16 + 8
	unconnectedPingNoGUIDLen = 1 + 8 + 16
)

// Len is the encoded size of p.
func (p *UnconnectedPing) Len() int { return unconnectedPingLen }

// Append appends the encoded ping to b. Every ping encodes; the error is
// always nil.
func (p *UnconnectedPing) Append(b []byte) ([]byte, error) {
	id := IDUnconnectedPing
	if p.OpenConnectionsOnly {
		id = IDUnconnectedPingOpenConnections
	}
	b = append(b, id)
	b = appendU64(b, p.SendTime)
	b = append(b, offlineMagic[:]...)
	return appendU64(b, p.ClientGUID), nil
}

// ParseUnconnectedPing decodes an unconnected ping (0x01 or 0x02) into p.
// Like the original library it accepts a ping without the trailing GUID,
// which then reads as 0, and leaves bytes after it unread.
func ParseUnconnectedPing(b []byte, p *UnconnectedPing) (int, error) {
	if len(b) == 0 {
		return 0, ErrShortMessage
	}
	if b[0] != IDUnconnectedPing && b[0] != IDUnconnectedPingOpenConnections {
		return 0, ErrWrongID
	}
	if len(b) < unconnectedPingNoGUIDLen {
		return 0, ErrShortMessage
	}
	if !hasMagic(b, 9) {
		return 0, ErrBadMagic
	}
	*p = UnconnectedPing{
		OpenConnectionsOnly: b[0] == IDUnconnectedPingOpenConnections,
		SendTime:            binary.BigEndian.Uint64(b[1:]),
	}
	if len(b) < unconnectedPingLen {
		return unconnectedPingNoGUIDLen, nil
	}
	p.ClientGUID = binary.BigEndian.Uint64(b[25:])
	return unconnectedPingLen, nil
}

// PongEncoding says how pong data is framed after the magic.
type PongEncoding uint8

const (
	// PongPrefixed writes the data after a u16 BE length, as Minecraft
	// Bedrock and go-raknet do. go-raknet cannot read a raw pong, so this
	// is the default.
	PongPrefixed PongEncoding = iota
	// PongRaw writes the data bare, up to the end of the datagram, as the
	// original C++ library does.
	PongRaw
)

// String returns "prefixed" or "raw".
func (e PongEncoding) String() string {
	switch e {
	case PongPrefixed:
		return "prefixed"
	case PongRaw:
		return "raw"
	}
	return "PongEncoding(" + strconv.Itoa(int(e)) + ")"
}

// MaxPongDataLen bounds the pong data on the wire, including a length
// prefix when there is one. The original library drops pongs whose data is
// MAX_OFFLINE_DATA_LENGTH (400) bytes or more, and keeping a pong small
// limits how much a spoofed ping can amplify: a 33-byte ping may draw at
// most a 432-byte pong.
const MaxPongDataLen = 399

// UnconnectedPong answers an unconnected ping. Layout: id, u64 BE echoed
// send time, u64 BE server GUID, magic, data.
type UnconnectedPong struct {
	SendTime   uint64
	ServerGUID uint64
	// Data is the server's advertisement, for Bedrock servers a MOTD (see
	// BedrockMOTD). After ParseUnconnectedPong it aliases the parsed
	// buffer.
	Data []byte
	// Encoding is how Data is framed; the parser reports what it found.
	Encoding PongEncoding
}

const unconnectedPongHeaderLen = 1 + 8 + 8 + 16

// Len is the encoded size of p.
func (p *UnconnectedPong) Len() int {
	n := unconnectedPongHeaderLen + len(p.Data)
	if p.Encoding != PongRaw {
		n += 2
	}
	return n
}

// Append appends the encoded pong to b. It fails with ErrPongDataTooLong
// rather than produce a pong peers would drop.
func (p *UnconnectedPong) Append(b []byte) ([]byte, error) {
	if p.Len()-unconnectedPongHeaderLen > MaxPongDataLen {
		return b, ErrPongDataTooLong
	}
	b = append(b, IDUnconnectedPong)
	b = appendU64(b, p.SendTime)
	b = appendU64(b, p.ServerGUID)
	b = append(b, offlineMagic[:]...)
	if p.Encoding != PongRaw {
		b = appendU16(b, uint16(len(p.Data)))
	}
	return append(b, p.Data...), nil
}

// ParseUnconnectedPong decodes an unconnected pong into p and works out
// how its data is framed; the data runs to the end of b, so it uses all of
// b. The data is taken as length-prefixed when its first two bytes, read
// as a u16 BE, equal the number of bytes after them; otherwise it is raw.
//
// The heuristic cannot misread text: for raw data of n bytes to pass as
// prefixed, its first byte would have to be the high byte of n-2, which for
// anything that fits in an Ethernet-sized datagram is 0x00 to 0x05, a
// control character no printable advertisement such as a Bedrock MOTD
// starts with. Empty data is read as a prefixed empty string when the two
// bytes 00 00 are present and as raw empty data when nothing follows the
// magic.
func ParseUnconnectedPong(b []byte, p *UnconnectedPong) (int, error) {
	if err := checkHeader(b, IDUnconnectedPong, 17, unconnectedPongHeaderLen); err != nil {
		return 0, err
	}
	p.SendTime = binary.BigEndian.Uint64(b[1:])
	p.ServerGUID = binary.BigEndian.Uint64(b[9:])
	rest := b[unconnectedPongHeaderLen:]
	if len(rest) >= 2 && int(binary.BigEndian.Uint16(rest)) == len(rest)-2 {
		p.Data, p.Encoding = rest[2:len(rest):len(rest)], PongPrefixed
	} else {
		p.Data, p.Encoding = rest[:len(rest):len(rest)], PongRaw
	}
	return len(b), nil
}

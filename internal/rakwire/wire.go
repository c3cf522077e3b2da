package rakwire

import "errors"

// Bits of a datagram's first byte. The valid bit separates connected
// datagrams from offline messages, whose first byte is a message id below
// 0x80. In an ACK datagram the bit after ACK means "has B and AS" (a float
// follows), not NAK, so a decoder tests the ACK bit first.
const (
	HeaderValid          byte = 0x80
	HeaderACK            byte = 0x40
	HeaderNAK            byte = 0x20 // only when HeaderACK is clear
	HeaderHasBAndAS      byte = 0x20 // only when HeaderACK is set
	HeaderPacketPair     byte = 0x10 // data datagrams only
	HeaderContinuousSend byte = 0x08 // data datagrams only
	HeaderNeedsBAndAS    byte = 0x04 // data datagrams only
)

// Malformed input, and values Append cannot encode. Parsers return these
// so that a caller can count drops by reason with errors.Is.
var (
	// ErrTruncated: the input ends inside a field.
	ErrTruncated = errors.New("rakwire: truncated datagram")
	// ErrNotConnected: the valid bit (0x80) is clear, so this is an offline
	// message, not a connected datagram.
	ErrNotConnected = errors.New("rakwire: not a connected datagram")
	// ErrWrongDatagramType: a data parser was given an ACK or NAK datagram,
	// or the other way round.
	ErrWrongDatagramType = errors.New("rakwire: wrong datagram type")
	// ErrZeroLength: a frame declares an empty payload, which RakNet never
	// sends. The rest of the datagram cannot be trusted. Append returns it
	// for an empty payload.
	ErrZeroLength = errors.New("rakwire: zero-length frame")
	// ErrFrameTooLong: a frame's bit length rounds up to more than
	// MaxFramePayload bytes, which no frame can carry (it would exceed any
	// MTU, and could not be re-encoded). Append returns it for a longer
	// payload.
	ErrFrameTooLong = errors.New("rakwire: frame length out of range")
	// ErrFrameChannel: a frame names an ordering channel of 32 or more. The
	// frame is well delimited, so a reader skips it and goes on.
	ErrFrameChannel = errors.New("rakwire: frame ordering channel out of range")
	// ErrFrameSplit: a split frame has a split count of zero or a split index
	// not below its count. A reader skips it and goes on.
	ErrFrameSplit = errors.New("rakwire: frame split fields inconsistent")
	// ErrRangeInverted: an ACK/NAK range has min > max.
	ErrRangeInverted = errors.New("rakwire: ack range min > max")
	// ErrRangeCount: a range list's record count is larger than the bytes
	// that follow could hold; for Append, more than 65535 ranges.
	ErrRangeCount = errors.New("rakwire: ack range count out of range")
	// ErrU24: Append was given a datagram number, index or range bound of
	// 2^24 or more, which a 24-bit field cannot hold.
	ErrU24 = errors.New("rakwire: value does not fit 24 bits")
)

// maxU24 is the largest value of a 24-bit field.
const maxU24 = 1<<24 - 1

// appendU24 appends v, little-endian, as RakNet writes every 24-bit
// counter (the one little-endian field in a big-endian format); the caller
// has checked that v fits.
func appendU24(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16))
}

// u24 reads a little-endian 24-bit value; b must hold at least 3 bytes.
func u24(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
}

package reliability

import "errors"

// Wire format of RakNet's connected datagrams, as the original C++ library
// (RakNet 4.081) writes them. Everything here is a pure function: no I/O,
// no clock, no state, and no parser panics on any input. Parsed values alias
// the input buffer; nothing here allocates except when growing a buffer the
// caller passed to an Append function.

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

// Malformed input. Parsers return these (possibly wrapped) so a caller can
// count drops by reason with errors.Is. None of them is ever sent back to
// the peer.
var (
	// ErrTruncated: the input ends inside a field.
	ErrTruncated = errors.New("reliability: truncated datagram")
	// ErrNotConnected: the valid bit (0x80) is clear, so this is an offline
	// message, not a connected datagram.
	ErrNotConnected = errors.New("reliability: not a connected datagram")
	// ErrWrongDatagramType: a data parser was given an ACK or NAK datagram,
	// or the other way round.
	ErrWrongDatagramType = errors.New("reliability: wrong datagram type")
	// ErrZeroLength: a frame declares an empty payload, which RakNet never
	// sends. The rest of the datagram cannot be trusted.
	ErrZeroLength = errors.New("reliability: zero-length frame")
	// ErrFrameTooLong: a frame's bit length rounds up to more than
	// MaxFramePayload bytes, which no frame can carry (it would exceed any
	// MTU, and could not be re-encoded).
	ErrFrameTooLong = errors.New("reliability: frame length out of range")
	// ErrFrameChannel: a frame names an ordering channel of 32 or more. The
	// frame is well delimited, so a reader skips it and goes on.
	ErrFrameChannel = errors.New("reliability: frame ordering channel out of range")
	// ErrFrameSplit: a split frame has a split count of zero or a split index
	// not below its count. A reader skips it and goes on.
	ErrFrameSplit = errors.New("reliability: frame split fields inconsistent")
	// ErrRangeInverted: an ACK/NAK range has min > max.
	ErrRangeInverted = errors.New("reliability: ack range min > max")
	// ErrRangeCount: a range list's record count is larger than the bytes
	// that follow could hold.
	ErrRangeCount = errors.New("reliability: ack range count exceeds datagram")
)

// DatagramType is what the first byte says a UDP payload is.
type DatagramType uint8

const (
	// DatagramOffline: the valid bit is clear (or the payload is empty); an
	// offline message for the raknet layer, never for the engine.
	DatagramOffline DatagramType = iota
	// DatagramData carries frames.
	DatagramData
	// DatagramACK acknowledges datagram numbers.
	DatagramACK
	// DatagramNAK reports missing datagram numbers.
	DatagramNAK
)

func (t DatagramType) String() string {
	switch t {
	case DatagramOffline:
		return "offline"
	case DatagramData:
		return "data"
	case DatagramACK:
		return "ack"
	case DatagramNAK:
		return "nak"
	}
	return "DatagramType(invalid)"
}

// ClassifyDatagram tells from the first byte which parser applies to b.
func ClassifyDatagram(b []byte) DatagramType {
	if len(b) == 0 || b[0]&HeaderValid == 0 {
		return DatagramOffline
	}
	switch {
	case b[0]&HeaderACK != 0:
		return DatagramACK
	case b[0]&HeaderNAK != 0:
		return DatagramNAK
	}
	return DatagramData
}

// appendU24 appends the low 24 bits of v, little-endian, as RakNet writes
// every 24-bit counter (the one little-endian field in a big-endian format).
func appendU24(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16))
}

// u24 reads a little-endian 24-bit value; b must hold at least 3 bytes.
func u24(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
}

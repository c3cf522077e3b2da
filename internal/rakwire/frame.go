package rakwire

import "encoding/binary"

// Frame wire format (RakNet's "internal packet"), all inside a data
// datagram, fields in this order, each present only for the kinds named:
//
//	u8      flags: reliability<<5 | split<<4 (low four bits zero)
//	u16 BE  payload length in bits
//	u24 LE  reliable message index       kinds 2, 3, 4, 6, 7
//	u24 LE  sequencing index             kinds 1, 4
//	u24 LE  ordering index               kinds 1, 3, 4, 7
//	u8      ordering channel             kinds 1, 3, 4, 7
//	u32 BE  split count                  split only
//	u16 BE  split id                     split only
//	u32 BE  split index                  split only
//	        payload
//
// Length in bits: the original library reads BITS_TO_BYTES(length) bytes,
// rounding up, because its API can send bit streams that end mid-byte. We
// do the same, so a length that is not a multiple of 8 is accepted and the
// payload is the rounded-up byte count; the unused low bits of the last
// byte are the sender's business. Append always writes 8·len(Payload), so
// such a frame re-encodes with the rounded-up length (the only way a
// parsed frame does not re-encode byte for byte).

// Reliability is a frame's kind, the top three bits of its flags byte,
// which decides the frame's layout. Package reliability gives the kinds
// their meaning.
type Reliability uint8

// The eight kinds, numbered as on the wire.
const (
	Unreliable Reliability = iota
	UnreliableSequenced
	Reliable
	ReliableOrdered
	ReliableSequenced
	UnreliableWithAckReceipt
	ReliableWithAckReceipt
	ReliableOrderedWithAckReceipt
)

// The layout of each kind, as bit sets over the kinds 0..7: a frame
// parser asks for each field of every frame, and a set costs a shift where
// a switch costs a compare per kind.
const (
	reliableKinds  = 1<<Reliable | 1<<ReliableOrdered | 1<<ReliableSequenced | 1<<ReliableWithAckReceipt | 1<<ReliableOrderedWithAckReceipt
	sequencedKinds = 1<<UnreliableSequenced | 1<<ReliableSequenced
	channelKinds   = sequencedKinds | 1<<ReliableOrdered | 1<<ReliableOrderedWithAckReceipt
)

// IsReliable reports whether frames of kind r carry a reliable message
// index: kinds 2, 3, 4, 6 and 7.
func (r Reliability) IsReliable() bool { return r < 8 && reliableKinds>>r&1 != 0 }

// IsSequenced reports whether frames of kind r carry a sequencing index:
// kinds 1 and 4.
func (r Reliability) IsSequenced() bool { return r < 8 && sequencedKinds>>r&1 != 0 }

// HasOrderingChannel reports whether frames of kind r carry an ordering
// index and channel: the sequenced kinds and the ordered ones, 3 and 7.
func (r Reliability) HasOrderingChannel() bool { return r < 8 && channelKinds>>r&1 != 0 }

// WireKind is the kind the original library puts on the wire: receipts are
// tracked by the sender only, so kinds 5, 6 and 7 travel as 0, 2 and 3.
func (r Reliability) WireKind() Reliability {
	if r >= UnreliableWithAckReceipt && r <= ReliableOrderedWithAckReceipt {
		return [...]Reliability{Unreliable, Reliable, ReliableOrdered}[r-UnreliableWithAckReceipt]
	}
	return r
}

// Frame is one encapsulated message, or one part of a split message, as it
// travels inside a datagram. Index fields are 24-bit on the wire and wrap.
type Frame struct {
	Reliability     Reliability
	ReliableIndex   uint32 // present when Reliability.IsReliable()
	SequencingIndex uint32 // present when Reliability.IsSequenced()
	OrderingIndex   uint32 // present when Reliability.HasOrderingChannel()
	OrderingChannel uint8  // present when Reliability.HasOrderingChannel()

	Split      bool
	SplitCount uint32 // number of parts; present when Split
	SplitID    uint16 // identifies the split message; present when Split
	SplitIndex uint32 // this part's position; present when Split

	// Payload is the message body, or this part of it. A parsed frame's
	// Payload aliases the datagram it was read from.
	Payload []byte
}

const (
	// MaxFramePayload is the largest payload one frame can describe: the
	// bit length is a u16, so 65535 bits round down to 8191 whole bytes.
	// Real frames are far smaller, since a frame never exceeds the MTU.
	MaxFramePayload = 0xffff / 8
	// splitFieldsLen is the size of the split count, id and index.
	splitFieldsLen = 4 + 2 + 4
)

// FrameHeaderLen returns the size of a frame header of kind r, with or
// without split fields; the payload follows it. Kinds 5, 6 and 7 have the
// same layout as 0, 2 and 3.
func FrameHeaderLen(r Reliability, split bool) int {
	n := 3
	if r.IsReliable() {
		n += 3
	}
	if r.IsSequenced() {
		n += 3
	}
	if r.HasOrderingChannel() {
		n += 4
	}
	if split {
		n += splitFieldsLen
	}
	return n
}

// Len returns the encoded size of f.
func (f *Frame) Len() int { return FrameHeaderLen(f.Reliability, f.Split) + len(f.Payload) }

// Append appends f to b. It writes f.Reliability.WireKind(), as the
// original library does: receipts are the sender's business, so kinds 5, 6
// and 7 travel as 0, 2 and 3. Fields the kind does not carry are not
// written. The payload must be 1..MaxFramePayload bytes (ErrZeroLength,
// ErrFrameTooLong) and every index below 2^24 (ErrU24), carried or not:
// one test for all three is cheaper, and a wider value anywhere is a bug.
// The channel and the split fields are written as given, so that a test
// can build the frames a hostile peer would send.
func (f *Frame) Append(b []byte) ([]byte, error) {
	switch {
	case len(f.Payload) == 0:
		return b, ErrZeroLength
	case len(f.Payload) > MaxFramePayload:
		return b, ErrFrameTooLong
	}
	if f.ReliableIndex|f.SequencingIndex|f.OrderingIndex > maxU24 {
		return b, ErrU24
	}
	r := f.Reliability.WireKind() & 7
	rel, seq, ord := r.IsReliable(), r.IsSequenced(), r.HasOrderingChannel()
	flags := byte(r) << 5
	if f.Split {
		flags |= 0x10
	}
	b = append(b, flags)
	b = binary.BigEndian.AppendUint16(b, uint16(len(f.Payload)*8))
	if rel {
		b = appendU24(b, f.ReliableIndex)
	}
	if seq {
		b = appendU24(b, f.SequencingIndex)
	}
	if ord {
		b = appendU24(b, f.OrderingIndex)
		b = append(b, f.OrderingChannel)
	}
	if f.Split {
		b = binary.BigEndian.AppendUint32(b, f.SplitCount)
		b = binary.BigEndian.AppendUint16(b, f.SplitID)
		b = binary.BigEndian.AppendUint32(b, f.SplitIndex)
	}
	return append(b, f.Payload...), nil
}

// ParseFrame parses one frame from the start of b into f, overwriting every
// field, and returns the bytes it used. f.Payload aliases b. Fields the
// kind does not carry are set to zero.
//
// Errors: ErrTruncated when b ends inside the frame; ErrZeroLength for an
// empty payload; ErrFrameTooLong for a bit length above 8·MaxFramePayload
// (all three leave n = 0: nothing after this point can be delimited).
// ErrFrameChannel (channel >= 32) and ErrFrameSplit (split count 0, or
// index >= count) come with n set to the whole frame's length, so the
// caller can skip just this frame.
func ParseFrame(b []byte, f *Frame) (n int, err error) {
	*f = Frame{}
	if len(b) < 3 {
		return 0, ErrTruncated
	}
	r := Reliability(b[0] >> 5)
	split := b[0]&0x10 != 0
	bits := int(binary.BigEndian.Uint16(b[1:]))
	if bits == 0 {
		return 0, ErrZeroLength
	}
	size := (bits + 7) / 8
	if size > MaxFramePayload {
		return 0, ErrFrameTooLong
	}
	hdr := FrameHeaderLen(r, split)
	if len(b) < hdr+size {
		return 0, ErrTruncated
	}
	f.Reliability = r
	f.Split = split
	p := 3
	if r.IsReliable() {
		f.ReliableIndex = u24(b[p:])
		p += 3
	}
	if r.IsSequenced() {
		f.SequencingIndex = u24(b[p:])
		p += 3
	}
	if r.HasOrderingChannel() {
		f.OrderingIndex = u24(b[p:])
		f.OrderingChannel = b[p+3]
		p += 4
	}
	if split {
		f.SplitCount = binary.BigEndian.Uint32(b[p:])
		f.SplitID = binary.BigEndian.Uint16(b[p+4:])
		f.SplitIndex = binary.BigEndian.Uint32(b[p+6:])
		p += splitFieldsLen
	}
	f.Payload = b[p : p+size : p+size]
	n = p + size
	switch {
	case f.OrderingChannel >= NumOrderingChannels:
		return n, ErrFrameChannel
	case split && (f.SplitCount == 0 || f.SplitIndex >= f.SplitCount):
		return n, ErrFrameSplit
	}
	return n, nil
}

// NumOrderingChannels is how many ordering channels RakNet has: 32. A
// frame naming another is dropped.
const NumOrderingChannels = 32

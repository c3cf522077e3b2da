package rakwire

import (
	"errors"
	"io"
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

// DataHeaderLen is the size of a data datagram's header: the flags byte and
// the u24 datagram number. Frames follow it.
const DataHeaderLen = 4

// DataHeader is the header of a data datagram (one that carries frames).
// The original library sends 0x84 for the first datagram of a burst and 0x8c
// (continuous send) for the rest; it never sets packet pair in its default
// sliding-window build.
type DataHeader struct {
	PacketPair     bool
	ContinuousSend bool
	NeedsBAndAS    bool
	// Number is the datagram number, 24 bits, wrapping. Every datagram gets
	// a new number; resent frames travel under new numbers.
	Number uint32
}

// Append appends the header to b. A Number of 2^24 or more is ErrU24.
func (h *DataHeader) Append(b []byte) ([]byte, error) {
	if h.Number > maxU24 {
		return b, ErrU24
	}
	flags := HeaderValid
	if h.PacketPair {
		flags |= HeaderPacketPair
	}
	if h.ContinuousSend {
		flags |= HeaderContinuousSend
	}
	if h.NeedsBAndAS {
		flags |= HeaderNeedsBAndAS
	}
	return appendU24(append(b, flags), h.Number), nil
}

// Len returns DataHeaderLen.
func (h *DataHeader) Len() int { return DataHeaderLen }

// ParseDataHeader parses the header of a data datagram into h and returns
// the bytes it used (DataHeaderLen on success); the frames follow them,
// for NewFrameReader. The two lowest bits of the flags byte are padding in
// the original encoding and are ignored.
func ParseDataHeader(b []byte, h *DataHeader) (int, error) {
	*h = DataHeader{}
	if len(b) < DataHeaderLen {
		if len(b) > 0 && b[0]&HeaderValid == 0 {
			return 0, ErrNotConnected
		}
		return 0, ErrTruncated
	}
	flags := b[0]
	switch {
	case flags&HeaderValid == 0:
		return 0, ErrNotConnected
	case flags&(HeaderACK|HeaderNAK) != 0:
		return 0, ErrWrongDatagramType
	}
	*h = DataHeader{
		PacketPair:     flags&HeaderPacketPair != 0,
		ContinuousSend: flags&HeaderContinuousSend != 0,
		NeedsBAndAS:    flags&HeaderNeedsBAndAS != 0,
		Number:         u24(b[1:]),
	}
	return DataHeaderLen, nil
}

// FrameReader iterates over the frames packed in a data datagram without
// allocating. The zero value reads nothing.
//
//	for {
//		err := r.Next(&f)
//		if err == io.EOF { break }
//		if r.Skippable(err) { count(err); continue }
//		if err != nil { count(err); break }
//		use(&f) // f.Payload aliases the datagram
//	}
type FrameReader struct {
	b   []byte
	off int
}

// NewFrameReader returns a reader over frames, the bytes after a data
// datagram's header. Nothing is copied: frames read alias them.
func NewFrameReader(frames []byte) FrameReader { return FrameReader{b: frames} }

// Next parses the next frame into f, overwriting every field. It returns
// io.EOF after the last frame. ErrFrameChannel and ErrFrameSplit drop one
// well-delimited frame: the reader has moved past it and Next may be called
// again. Any other error leaves the rest of the datagram unreadable, and
// every later call returns io.EOF.
func (r *FrameReader) Next(f *Frame) error {
	if r.off >= len(r.b) {
		return io.EOF
	}
	n, err := ParseFrame(r.b[r.off:], f)
	if err != nil && !r.Skippable(err) {
		r.off = len(r.b)
		return err
	}
	r.off += n
	return err
}

// Skippable reports whether err, returned by Next, dropped a single frame
// and left the reader positioned on the next one.
func (r *FrameReader) Skippable(err error) bool {
	return errors.Is(err, ErrFrameChannel) || errors.Is(err, ErrFrameSplit)
}

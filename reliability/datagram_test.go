package reliability

import (
	"testing"

	"github.com/netrak/netrak/internal/rakwire"
)

// Datagrams for the engine's tests, built and read with package rakwire.

// datagram builds a data datagram numbered num holding frames.
func datagram(tb testing.TB, num uint32, frames ...rakwire.Frame) []byte {
	tb.Helper()
	return appendDatagram(tb, nil, rakwire.DataHeader{NeedsBAndAS: true, Number: num}, frames...)
}

// appendDatagram appends a data datagram with header h holding frames.
func appendDatagram(tb testing.TB, b []byte, h rakwire.DataHeader, frames ...rakwire.Frame) []byte {
	tb.Helper()
	b, err := h.Append(b)
	for i := range frames {
		if err == nil {
			b, err = frames[i].Append(b)
		}
	}
	if err != nil {
		tb.Fatalf("datagram %d: %v", h.Number, err)
	}
	return b
}

// encodeAck returns a as an ACK or NAK datagram.
func encodeAck(tb testing.TB, a rakwire.Ack) []byte {
	tb.Helper()
	b, err := a.Append(nil)
	if err != nil {
		tb.Fatalf("%+v: %v", a, err)
	}
	return b
}

// parseDataDatagram parses a data datagram's header and returns a reader
// over its frames.
func parseDataDatagram(b []byte) (rakwire.DataHeader, rakwire.FrameReader, error) {
	var h rakwire.DataHeader
	n, err := rakwire.ParseDataHeader(b, &h)
	if err != nil {
		return h, rakwire.FrameReader{}, err
	}
	return h, rakwire.NewFrameReader(b[n:]), nil
}

// kind is r as a frame's kind.
func kind(r Reliability) rakwire.Reliability { return rakwire.Reliability(r) }

// The engine's API and the wire code agree on the kinds and the channels.
func TestWireAgreement(t *testing.T) {
	if NumOrderingChannels != rakwire.NumOrderingChannels {
		t.Errorf("%d ordering channels, the wire code has %d", NumOrderingChannels, rakwire.NumOrderingChannels)
	}
	for r, w := range map[Reliability]rakwire.Reliability{
		Unreliable: rakwire.Unreliable, UnreliableSequenced: rakwire.UnreliableSequenced,
		Reliable: rakwire.Reliable, ReliableOrdered: rakwire.ReliableOrdered,
		ReliableSequenced: rakwire.ReliableSequenced, UnreliableWithAckReceipt: rakwire.UnreliableWithAckReceipt,
		ReliableWithAckReceipt: rakwire.ReliableWithAckReceipt, ReliableOrderedWithAckReceipt: rakwire.ReliableOrderedWithAckReceipt,
	} {
		if kind(r) != w {
			t.Errorf("%v is %d, the wire code's is %d", r, r, w)
		}
	}
}

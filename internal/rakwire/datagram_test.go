package rakwire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassifyDatagram(t *testing.T) {
	tests := []struct {
		b    []byte
		want DatagramType
	}{
		{nil, DatagramOffline},
		{[]byte{0x01}, DatagramOffline},
		{[]byte{0x7f}, DatagramOffline},
		{[]byte{0x84}, DatagramData},
		{[]byte{0x8c}, DatagramData},
		{[]byte{0x80}, DatagramData},
		{[]byte{0x9c}, DatagramData},
		{[]byte{0xc0}, DatagramACK},
		{[]byte{0xe0}, DatagramACK}, // ACK with B and AS: 0x20 is not NAK here
		{[]byte{0xa0}, DatagramNAK},
		{[]byte{0xff}, DatagramACK},
	}
	for _, tt := range tests {
		if got := ClassifyDatagram(tt.b); got != tt.want {
			t.Errorf("ClassifyDatagram(%x) = %v, want %v", tt.b, got, tt.want)
		}
	}
}

func TestDataHeaderRoundTrip(t *testing.T) {
	for _, num := range []uint32{0, 1, 0x7fffff, 0x800000, 0xfffffe, 0xffffff} {
		for flags := 0; flags < 8; flags++ {
			h := DataHeader{
				PacketPair:     flags&1 != 0,
				ContinuousSend: flags&2 != 0,
				NeedsBAndAS:    flags&4 != 0,
				Number:         num,
			}
			b := mustAppend(t, nil, &h)
			if len(b) != h.Len() || len(b) != DataHeaderLen {
				t.Fatalf("%+v: encoded %d bytes", h, len(b))
			}
			got := DataHeader{Number: 99}
			n, err := ParseDataHeader(b, &got)
			if err != nil || n != DataHeaderLen || got != h {
				t.Fatalf("%+v: parsed %+v, %d, %v", h, got, n, err)
			}
		}
	}
	// The two header bytes the original library sends.
	for _, tt := range []struct {
		h    DataHeader
		want []byte
	}{
		{DataHeader{NeedsBAndAS: true, Number: 0x030201}, []byte{0x84, 1, 2, 3}},
		{DataHeader{NeedsBAndAS: true, ContinuousSend: true, Number: 0xffffff}, []byte{0x8c, 0xff, 0xff, 0xff}},
		{DataHeader{PacketPair: true, Number: 1}, []byte{0x90, 1, 0, 0}},
	} {
		if got := mustAppend(t, nil, &tt.h); !bytes.Equal(got, tt.want) {
			t.Errorf("%+v: %x, want %x", tt.h, got, tt.want)
		}
	}
	// A number wider than 24 bits cannot be encoded.
	h := DataHeader{Number: 1<<24 | 5}
	if b, err := h.Append([]byte{1}); !errors.Is(err, ErrU24) || !bytes.Equal(b, []byte{1}) {
		t.Errorf("Append of number %#x = %x, %v; want the input and ErrU24", h.Number, b, err)
	}
}

func TestDataHeaderErrors(t *testing.T) {
	tests := []struct {
		b    []byte
		want error
	}{
		{nil, ErrTruncated},
		{[]byte{0x84, 0, 0}, ErrTruncated},
		{[]byte{0x05, 0, 0, 0}, ErrNotConnected},
		{[]byte{0x05}, ErrNotConnected},
		{[]byte{0xc0, 0, 0, 0}, ErrWrongDatagramType},
		{[]byte{0xa0, 0, 0, 0}, ErrWrongDatagramType},
	}
	for _, tt := range tests {
		h := DataHeader{ContinuousSend: true, Number: 7}
		if n, err := ParseDataHeader(tt.b, &h); !errors.Is(err, tt.want) || n != 0 || h != (DataHeader{}) {
			t.Errorf("ParseDataHeader(%x) = %d, %v, %+v; want 0, %v and a zero header", tt.b, n, err, h, tt.want)
		}
	}
}

func TestFrameReader(t *testing.T) {
	h := DataHeader{ContinuousSend: true, NeedsBAndAS: true, Number: 0xfffffe}
	b := mustAppend(t, nil, &h)
	good1 := Frame{Reliability: ReliableOrdered, ReliableIndex: 1, OrderingChannel: 3, Payload: []byte("one")}
	bad := Frame{Reliability: ReliableOrdered, ReliableIndex: 2, OrderingChannel: 40, Payload: []byte("bad channel")}
	good2 := Frame{Reliability: Unreliable, Payload: []byte("two")}
	b = mustAppend(t, b, &good1)
	b = mustAppend(t, b, &bad)
	b = mustAppend(t, b, &good2)
	b = append(b, 0x00, 0x00) // a truncated frame ends the datagram

	var gotH DataHeader
	n, err := ParseDataHeader(b, &gotH)
	if err != nil || gotH != h {
		t.Fatalf("ParseDataHeader = %+v, %v", gotH, err)
	}
	r := NewFrameReader(b[n:])
	var f Frame
	var seen []string
	var errs []error
	for {
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, err)
			if r.Skippable(err) {
				continue
			}
			break
		}
		seen = append(seen, string(f.Payload))
	}
	if diff := cmp.Diff([]string{"one", "two"}, seen); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if len(errs) != 2 || !errors.Is(errs[0], ErrFrameChannel) || !errors.Is(errs[1], ErrTruncated) {
		t.Errorf("errors = %v", errs)
	}
	if err := r.Next(&f); err != io.EOF {
		t.Errorf("Next after a fatal error = %v, want EOF", err)
	}
	// Payloads alias the datagram and cannot be appended over it.
	r = NewFrameReader(b[DataHeaderLen:])
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	if &f.Payload[0] != &b[DataHeaderLen+FrameHeaderLen(ReliableOrdered, false)] {
		t.Error("payload does not alias the datagram")
	}
	if cap(f.Payload) != len(f.Payload) {
		t.Error("payload capacity reaches past the frame")
	}
	var zero FrameReader
	if err := zero.Next(&f); err != io.EOF {
		t.Errorf("zero reader: %v, want EOF", err)
	}
}

// benchSmallFrames fills one MTU-1492 datagram with 32-byte reliable
// ordered frames.
func benchSmallFrames() (DataHeader, []Frame) {
	payload := make([]byte, 32)
	var frames []Frame
	size := DataHeaderLen
	for i := uint32(0); ; i++ {
		f := Frame{Reliability: ReliableOrdered, ReliableIndex: i, OrderingIndex: i, OrderingChannel: 1, Payload: payload}
		if size+f.Len() > benchDatagramLen {
			break
		}
		size += f.Len()
		frames = append(frames, f)
	}
	return DataHeader{ContinuousSend: true, NeedsBAndAS: true, Number: 0xfffff0}, frames
}

func BenchmarkEncodeDatagramSmallFrames(b *testing.B) {
	h, frames := benchSmallFrames()
	buf := make([]byte, 0, benchDatagramLen)
	b.SetBytes(int64(len(encodeFrames(b, h, frames, nil))))
	b.ReportAllocs()
	for b.Loop() {
		buf = encodeFrames(b, h, frames, buf[:0])
	}
	b.ReportMetric(float64(len(frames)), "frames/datagram")
}

func encodeFrames(b *testing.B, h DataHeader, frames []Frame, buf []byte) []byte {
	buf, err := h.Append(buf)
	for i := range frames {
		if err != nil {
			break
		}
		buf, err = frames[i].Append(buf)
	}
	if err != nil {
		b.Fatal(err)
	}
	return buf
}

func BenchmarkDecodeDatagramSmallFrames(b *testing.B) {
	h, frames := benchSmallFrames()
	dgram := encodeFrames(b, h, frames, nil)
	b.SetBytes(int64(len(dgram)))
	b.ReportAllocs()
	var f Frame
	for b.Loop() {
		if n := decodeFrames(b, dgram, &f); n != len(frames) {
			b.Fatalf("%d frames", n)
		}
	}
}

// decodeFrames parses a data datagram and counts its frames, leaving the
// last in f.
func decodeFrames(b *testing.B, dgram []byte, f *Frame) int {
	var h DataHeader
	n, err := ParseDataHeader(dgram, &h)
	if err != nil {
		b.Fatal(err)
	}
	r := NewFrameReader(dgram[n:])
	n = 0
	for ; ; n++ {
		if err := r.Next(f); err == io.EOF {
			return n
		} else if err != nil {
			b.Fatal(err)
		}
	}
}

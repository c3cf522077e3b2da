package rakwire

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// limitFrames returns frames of every kind, split or not, with every field
// at its limits.
func limitFrames() []Frame {
	var out []Frame
	maxPayload := bytes.Repeat([]byte{0xa5}, MaxFramePayload)
	for r := Reliability(0); r < 8; r++ {
		for _, split := range []bool{false, true} {
			for _, v := range []uint32{0, 1, 0x7fffff, 0xffffff} {
				f := Frame{Reliability: r, Payload: []byte{byte(v)}}
				if r.IsReliable() {
					f.ReliableIndex = v
				}
				if r.IsSequenced() {
					f.SequencingIndex = maxU24 - v
				}
				if r.HasOrderingChannel() {
					f.OrderingIndex = v
					f.OrderingChannel = uint8(v % NumOrderingChannels)
				}
				if split {
					f.Split = true
					f.SplitCount = math.MaxUint32 - v
					f.SplitID = uint16(v)
					f.SplitIndex = f.SplitCount - 1
				}
				out = append(out, f)
			}
			f := Frame{Reliability: r, Payload: maxPayload, Split: split}
			if r.HasOrderingChannel() {
				f.OrderingChannel = NumOrderingChannels - 1
			}
			if split {
				f.SplitCount = 1
			}
			out = append(out, f)
		}
	}
	return out
}

func TestFrameRoundTrip(t *testing.T) {
	for _, f := range limitFrames() {
		b := mustAppend(t, []byte{0xee}, &f) // a prefix must be kept
		if b[0] != 0xee || len(b)-1 != f.Len() {
			t.Fatalf("%v split=%v: Append wrote %d bytes, Len says %d", f.Reliability, f.Split, len(b)-1, f.Len())
		}
		var got Frame
		n, err := ParseFrame(b[1:], &got)
		if err != nil || n != f.Len() {
			t.Fatalf("%v split=%v: ParseFrame = %d, %v", f.Reliability, f.Split, n, err)
		}
		want := f
		want.Reliability = f.Reliability.WireKind()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestFrameHeaderLen(t *testing.T) {
	// The header sizes of the eight kinds (RakNet's capsule size rule).
	want := [8]int{3, 3 + 3 + 4, 3 + 3, 3 + 3 + 4, 3 + 3 + 3 + 4, 3, 3 + 3, 3 + 3 + 4}
	for r := Reliability(0); r < 8; r++ {
		if got := FrameHeaderLen(r, false); got != want[r] {
			t.Errorf("FrameHeaderLen(%v) = %d, want %d", r, got, want[r])
		}
		if got := FrameHeaderLen(r, true); got != want[r]+10 {
			t.Errorf("FrameHeaderLen(%v, split) = %d, want %d", r, got, want[r]+10)
		}
	}
}

func TestFrameBytes(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want Frame
	}{
		{
			// Captured: the client's connection request, RELIABLE, 18 bytes.
			name: "reliable",
			b:    fromHex(t, "400090 000000 09000660ce784c8ea5000000000000001500"),
			want: Frame{Reliability: Reliable, Payload: fromHex(t, "09000660ce784c8ea5000000000000001500")},
		},
		{
			name: "ordered split",
			b:    fromHex(t, "700008 030201 060504 1f 0000000a abcd 00000009 77"),
			want: Frame{Reliability: ReliableOrdered, ReliableIndex: 0x010203, OrderingIndex: 0x040506, OrderingChannel: 31,
				Split: true, SplitCount: 10, SplitID: 0xabcd, SplitIndex: 9, Payload: []byte{0x77}},
		},
		{
			name: "unreliable sequenced",
			b:    fromHex(t, "200010 ffffff 000000 05 1122"),
			want: Frame{Reliability: UnreliableSequenced, SequencingIndex: 0xffffff, OrderingChannel: 5, Payload: []byte{0x11, 0x22}},
		},
		{
			name: "reliable sequenced",
			b:    fromHex(t, "800008 010000 020000 030000 04 99"),
			want: Frame{Reliability: ReliableSequenced, ReliableIndex: 1, SequencingIndex: 2, OrderingIndex: 3, OrderingChannel: 4, Payload: []byte{0x99}},
		},
		// Receivers accept the receipt kinds, with the layouts of 0, 2 and 3.
		{name: "kind 5", b: fromHex(t, "a00008 42"), want: Frame{Reliability: UnreliableWithAckReceipt, Payload: []byte{0x42}}},
		{name: "kind 6", b: fromHex(t, "c00008 070000 42"), want: Frame{Reliability: ReliableWithAckReceipt, ReliableIndex: 7, Payload: []byte{0x42}}},
		{name: "kind 7", b: fromHex(t, "e00008 070000 080000 02 42"), want: Frame{Reliability: ReliableOrderedWithAckReceipt, ReliableIndex: 7, OrderingIndex: 8, OrderingChannel: 2, Payload: []byte{0x42}}},
		// The longest frame: 65528 bits.
		{name: "max length", b: append(fromHex(t, "00fff8"), bytes.Repeat([]byte{7}, MaxFramePayload)...), want: Frame{Payload: bytes.Repeat([]byte{7}, MaxFramePayload)}},
		// A bit length that is not a whole number of bytes rounds up, as
		// BITS_TO_BYTES does in the original library.
		{name: "9 bits", b: fromHex(t, "000009 4280"), want: Frame{Payload: []byte{0x42, 0x80}}},
		{name: "1 bit", b: fromHex(t, "000001 80"), want: Frame{Payload: []byte{0x80}}},
	}
	for _, tt := range tests {
		var f Frame
		n, err := ParseFrame(tt.b, &f)
		if err != nil || n != len(tt.b) {
			t.Errorf("%s: ParseFrame = %d, %v", tt.name, n, err)
			continue
		}
		if diff := cmp.Diff(tt.want, f); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestFrameErrors(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		err  error
		n    int // bytes to skip for droppable frames
	}{
		{"empty", nil, ErrTruncated, 0},
		{"short header", fromHex(t, "4000"), ErrTruncated, 0},
		{"zero length", fromHex(t, "000000"), ErrZeroLength, 0},
		{"zero length reliable", fromHex(t, "400000 000000"), ErrZeroLength, 0},
		{"payload cut", fromHex(t, "000010 42"), ErrTruncated, 0},
		{"longest bit length", append(fromHex(t, "00fff9"), make([]byte, 8192)...), ErrFrameTooLong, 0},
		{"bit length 65535", append(fromHex(t, "00ffff"), make([]byte, 8192)...), ErrFrameTooLong, 0},
		{"index cut", fromHex(t, "400008 0000"), ErrTruncated, 0},
		{"split fields cut", fromHex(t, "100008 00000001 0000 000000"), ErrTruncated, 0},
		{"channel 32", fromHex(t, "600008 000000 000000 20 42"), ErrFrameChannel, 11},
		{"channel 255", fromHex(t, "200008 000000 000000 ff 42"), ErrFrameChannel, 11},
		{"split count 0", fromHex(t, "100008 00000000 0001 00000000 42"), ErrFrameSplit, 14},
		{"split index = count", fromHex(t, "100008 00000002 0001 00000002 42"), ErrFrameSplit, 14},
		{"split index > count", fromHex(t, "100008 00000002 0001 ffffffff 42"), ErrFrameSplit, 14},
	}
	for _, tt := range tests {
		var f Frame
		n, err := ParseFrame(tt.b, &f)
		if !errors.Is(err, tt.err) || n != tt.n {
			t.Errorf("%s: ParseFrame = %d, %v; want %d, %v", tt.name, n, err, tt.n, tt.err)
		}
	}
}

func TestFrameAppendErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    Frame
		want error
	}{
		{"empty payload", Frame{}, ErrZeroLength},
		{"long payload", Frame{Payload: make([]byte, MaxFramePayload+1)}, ErrFrameTooLong},
		{"reliable index", Frame{Reliability: Reliable, ReliableIndex: 1 << 24, Payload: []byte{1}}, ErrU24},
		{"sequencing index", Frame{Reliability: UnreliableSequenced, SequencingIndex: 1 << 24, Payload: []byte{1}}, ErrU24},
		{"ordering index", Frame{Reliability: ReliableOrderedWithAckReceipt, OrderingIndex: 1 << 31, Payload: []byte{1}}, ErrU24},
		{"index not carried", Frame{Reliability: Unreliable, SequencingIndex: 1 << 24, Payload: []byte{1}}, ErrU24},
	} {
		if b, err := tt.f.Append([]byte{0xee}); !errors.Is(err, tt.want) || !bytes.Equal(b, []byte{0xee}) {
			t.Errorf("%s: Append = %x, %v; want the input and %v", tt.name, b, err, tt.want)
		}
	}
	// Fields the kind does not carry are not written; a hostile channel
	// is written as given.
	f := Frame{Reliability: Unreliable, ReliableIndex: 7, OrderingChannel: 40, Payload: []byte{1}}
	if b, err := f.Append(nil); err != nil || !bytes.Equal(b, fromHex(t, "000008 01")) {
		t.Errorf("unreliable frame with stray fields: %x, %v", b, err)
	}
	f = Frame{Reliability: ReliableOrdered, OrderingChannel: 40, Payload: []byte{1}}
	var got Frame
	if n, err := ParseFrame(mustAppend(t, nil, &f), &got); !errors.Is(err, ErrFrameChannel) || n != f.Len() {
		t.Errorf("hostile channel: ParseFrame = %d, %v", n, err)
	}
}

// The layout of each kind: which fields its frames carry.
func TestReliabilityLayout(t *testing.T) {
	for _, tt := range []struct {
		r                          Reliability
		reliable, sequenced, chans bool
		wire                       Reliability
	}{
		{Unreliable, false, false, false, Unreliable},
		{UnreliableSequenced, false, true, true, UnreliableSequenced},
		{Reliable, true, false, false, Reliable},
		{ReliableOrdered, true, false, true, ReliableOrdered},
		{ReliableSequenced, true, true, true, ReliableSequenced},
		{UnreliableWithAckReceipt, false, false, false, Unreliable},
		{ReliableWithAckReceipt, true, false, false, Reliable},
		{ReliableOrderedWithAckReceipt, true, false, true, ReliableOrdered},
		{8, false, false, false, 8},
	} {
		if tt.r.IsReliable() != tt.reliable || tt.r.IsSequenced() != tt.sequenced ||
			tt.r.HasOrderingChannel() != tt.chans || tt.r.WireKind() != tt.wire {
			t.Errorf("kind %d: reliable %v sequenced %v channel %v wire %d", tt.r,
				tt.r.IsReliable(), tt.r.IsSequenced(), tt.r.HasOrderingChannel(), tt.r.WireKind())
		}
	}
}

// benchSplitFrame is one part of a large split message filling a datagram.
func benchSplitFrame() (DataHeader, Frame) {
	f := Frame{Reliability: ReliableOrdered, ReliableIndex: 77, OrderingIndex: 5, OrderingChannel: 0,
		Split: true, SplitCount: 50, SplitID: 9, SplitIndex: 17}
	f.Payload = make([]byte, benchDatagramLen-DataHeaderLen-FrameHeaderLen(f.Reliability, true))
	return DataHeader{ContinuousSend: true, NeedsBAndAS: true, Number: 42}, f
}

func BenchmarkEncodeSplitFrame(b *testing.B) {
	h, f := benchSplitFrame()
	buf := make([]byte, 0, benchDatagramLen)
	b.SetBytes(int64(len(encodeFrames(b, h, []Frame{f}, nil)))) // which checks that both encode
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = h.Append(buf[:0])
		buf, _ = f.Append(buf)
	}
}

func BenchmarkDecodeSplitFrame(b *testing.B) {
	h, f := benchSplitFrame()
	dgram := encodeFrames(b, h, []Frame{f}, nil)
	b.SetBytes(int64(len(dgram)))
	b.ReportAllocs()
	var got Frame
	var gotH DataHeader
	for b.Loop() {
		n, _ := ParseDataHeader(dgram, &gotH)
		r := NewFrameReader(dgram[n:])
		if err := r.Next(&got); err != nil || !got.Split {
			b.Fatal(err)
		}
	}
}

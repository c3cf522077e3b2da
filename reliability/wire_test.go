package reliability

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
			b := h.Append(nil)
			if len(b) != h.Len() || len(b) != DataHeaderLen {
				t.Fatalf("%+v: encoded %d bytes", h, len(b))
			}
			got, n, err := ParseDataHeader(b)
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
		if got := tt.h.Append(nil); !bytes.Equal(got, tt.want) {
			t.Errorf("%+v: %x, want %x", tt.h, got, tt.want)
		}
	}
	// Numbers wider than 24 bits are reduced.
	h := DataHeader{Number: 1<<24 | 5}
	if got, _, _ := ParseDataHeader(h.Append(nil)); got.Number != 5 {
		t.Errorf("number not reduced to 24 bits: %#x", got.Number)
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
		if _, _, err := ParseDataHeader(tt.b); !errors.Is(err, tt.want) {
			t.Errorf("ParseDataHeader(%x) = %v, want %v", tt.b, err, tt.want)
		}
	}
}

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
					f.SequencingIndex = seqMask - v
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
		b := f.Append([]byte{0xee}) // a prefix must be kept
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
	if FrameHeaderLen(ReliableSequenced, true) != MaxFrameHeaderLen {
		t.Errorf("MaxFrameHeaderLen = %d, want %d", MaxFrameHeaderLen, FrameHeaderLen(ReliableSequenced, true))
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

func TestFrameAppendPanicsOnBadPayload(t *testing.T) {
	for _, size := range []int{0, MaxFramePayload + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Append with a %d-byte payload did not panic", size)
				}
			}()
			f := Frame{Payload: make([]byte, size)}
			f.Append(nil)
		}()
	}
}

func TestFrameReader(t *testing.T) {
	h := DataHeader{ContinuousSend: true, NeedsBAndAS: true, Number: 0xfffffe}
	b := h.Append(nil)
	good1 := Frame{Reliability: ReliableOrdered, ReliableIndex: 1, OrderingChannel: 3, Payload: []byte("one")}
	bad := Frame{Reliability: ReliableOrdered, ReliableIndex: 2, OrderingChannel: 40, Payload: []byte("bad channel")}
	good2 := Frame{Reliability: Unreliable, Payload: []byte("two")}
	b = good1.Append(b)
	b = bad.Append(b)
	b = good2.Append(b)
	b = append(b, 0x00, 0x00) // a truncated frame ends the datagram

	gotH, r, err := ParseDataDatagram(b)
	if err != nil || gotH != h {
		t.Fatalf("ParseDataDatagram = %+v, %v", gotH, err)
	}
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
	_, r, _ = ParseDataDatagram(b)
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	if &f.Payload[0] != &b[DataHeaderLen+FrameHeaderLen(ReliableOrdered, false)] {
		t.Error("payload does not alias the datagram")
	}
	if cap(f.Payload) != len(f.Payload) {
		t.Error("payload capacity reaches past the frame")
	}
}

func TestRangeListRoundTrip(t *testing.T) {
	lists := [][]Range{
		{},
		{{0, 0}},
		{{0xffffff, 0xffffff}},
		{{0, 0xffffff}},
		{{1, 2}, {4, 4}, {6, 0xfffffe}},
	}
	for _, rs := range lists {
		b, n := AppendRangeList(nil, rs)
		if n != len(rs) || len(b) != RangeListLen(rs) {
			t.Fatalf("%v: wrote %d records in %d bytes, Len %d", rs, n, len(b), RangeListLen(rs))
		}
		got, used, err := ParseRangeList(b, nil)
		if err != nil || used != len(b) {
			t.Fatalf("%v: ParseRangeList = %d, %v", rs, used, err)
		}
		if diff := cmp.Diff(rs, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
	}
	// The original library's encoding of {single 1} and {range 3..5}.
	b, _ := AppendRangeList(nil, []Range{{1, 1}, {3, 5}})
	if want := fromHex(t, "0002 01 010000 00 030000 050000"); !bytes.Equal(b, want) {
		t.Errorf("encoded %x, want %x", b, want)
	}
}

func TestRangeListErrors(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"one byte", []byte{0}, ErrTruncated},
		{"count too large", fromHex(t, "0002 01 000000"), ErrRangeCount},
		{"huge count", fromHex(t, "ffff 01 000000"), ErrRangeCount},
		{"range cut", fromHex(t, "0001 00 000000 0000"), ErrTruncated},
		{"range max cut", fromHex(t, "0002 00 000000 00 01000000"), ErrTruncated},
		{"inverted", fromHex(t, "0001 00 050000 040000"), ErrRangeInverted},
	}
	for _, tt := range tests {
		if _, _, err := ParseRangeList(tt.b, nil); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// A range that names every datagram number parses in constant time.
	rs, _, err := ParseRangeList(fromHex(t, "0001 00 000000 ffffff"), nil)
	if err != nil || len(rs) != 1 || rs[0] != (Range{0, 0xffffff}) {
		t.Errorf("full range: %v, %v", rs, err)
	}
}

func TestAckRoundTrip(t *testing.T) {
	acks := []Ack{
		{Ranges: []Range{{0, 0}}},
		{Ranges: []Range{{0, 5}, {7, 7}, {0xfffff0, 0xffffff}}},
		{HasAS: true, AS: 1234.5, Ranges: []Range{{3, 3}}},
		{HasAS: true, AS: float32(math.Inf(1)), Ranges: []Range{{3, 4}}},
		{NAK: true, Ranges: []Range{{9, 9}, {11, 20}}},
	}
	for _, a := range acks {
		b := a.Append(nil)
		if len(b) != a.Len() {
			t.Fatalf("%+v: %d bytes, Len %d", a, len(b), a.Len())
		}
		var got Ack
		if err := ParseAck(b, &got); err != nil {
			t.Fatalf("%+v: %v", a, err)
		}
		if diff := cmp.Diff(a, got); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
	}
	// Header bytes: ACK 0xc0, ACK with AS 0xe0 plus a big-endian float, NAK 0xa0.
	for _, tt := range []struct {
		a    Ack
		want []byte
	}{
		{Ack{Ranges: []Range{{1, 1}}}, fromHex(t, "c0 0001 01 010000")},
		{Ack{HasAS: true, AS: 1, Ranges: []Range{{1, 1}}}, fromHex(t, "e0 3f800000 0001 01 010000")},
		{Ack{NAK: true, HasAS: true, Ranges: []Range{{1, 2}}}, fromHex(t, "a0 0001 00 010000 020000")},
	} {
		if got := tt.a.Append(nil); !bytes.Equal(got, tt.want) {
			t.Errorf("%+v: %x, want %x", tt.a, got, tt.want)
		}
	}
	// ParseAck reuses the caller's storage.
	a := Ack{Ranges: make([]Range, 0, 4)}
	p := &a.Ranges[:1][0]
	if err := ParseAck(fromHex(t, "a0 0001 01 050000"), &a); err != nil || &a.Ranges[0] != p {
		t.Errorf("ParseAck did not reuse Ranges: %v", err)
	}
}

func TestAckErrors(t *testing.T) {
	tests := []struct {
		b    []byte
		want error
	}{
		{nil, ErrTruncated},
		{[]byte{0x01}, ErrNotConnected},
		{[]byte{0x84, 0, 0, 0}, ErrWrongDatagramType},
		{[]byte{0xc0}, ErrTruncated},
		{[]byte{0xe0, 0, 0, 0}, ErrTruncated},
		{fromHex(t, "c0 0003 01 000000"), ErrRangeCount},
		{fromHex(t, "a0 0001 00 020000 010000"), ErrRangeInverted},
	}
	for _, tt := range tests {
		var a Ack
		if err := ParseAck(tt.b, &a); !errors.Is(err, tt.want) {
			t.Errorf("ParseAck(%x) = %v, want %v", tt.b, err, tt.want)
		}
	}
}

func TestAckFitAndCoalesce(t *testing.T) {
	// Every second number: no two coalesce, so each needs a 4-byte record.
	var nums []uint32
	for i := uint32(0); i < 1000; i++ {
		nums = append(nums, 0xffff00+2*i)
	}
	// Sort numerically as CoalesceRanges requires (the run crosses the wrap).
	for i := range nums {
		nums[i] &= seqMask
	}
	sortU32(nums)
	rs := CoalesceRanges(nil, nums)
	if len(rs) != 1000 {
		t.Fatalf("%d ranges, want 1000", len(rs))
	}
	const mtu = MaxMTU - 28
	var sent []Range
	for len(rs) > 0 {
		n := AckFit(false, false, rs, mtu)
		if n == 0 {
			t.Fatal("nothing fits")
		}
		a := Ack{Ranges: rs[:n]}
		if a.Len() > mtu {
			t.Fatalf("ACK of %d bytes exceeds %d", a.Len(), mtu)
		}
		if n < len(rs) {
			if b := (Ack{Ranges: rs[:n+1]}); b.Len() <= mtu {
				t.Fatalf("AckFit left room for another range")
			}
		}
		sent = append(sent, rs[:n]...)
		rs = rs[n:]
	}
	if len(sent) != 1000 {
		t.Fatalf("sent %d ranges", len(sent))
	}

	got := CoalesceRanges(nil, []uint32{0, 1, 2, 2, 4, 6, 7, 0xfffffe, 0xffffff})
	want := []Range{{0, 2}, {4, 4}, {6, 7}, {0xfffffe, 0xffffff}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CoalesceRanges (-want +got):\n%s", diff)
	}
	if got := AckFit(false, true, []Range{{1, 1}, {3, 3}}, 1+4+2+4); got != 1 {
		t.Errorf("AckFit with AS = %d, want 1", got)
	}
	if got := RangesThatFit(make([]Range, 70000), 1<<20); got != maxRangeRecords {
		t.Errorf("RangesThatFit caps at %d, want %d", got, maxRangeRecords)
	}
}

func sortU32(s []uint32) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// fromHex decodes hex with spaces allowed between bytes.
func fromHex(tb testing.TB, s string) []byte {
	tb.Helper()
	var b []byte
	var hi int = -1
	for _, c := range s {
		var v int
		switch {
		case c == ' ':
			continue
		case c >= '0' && c <= '9':
			v = int(c - '0')
		case c >= 'a' && c <= 'f':
			v = int(c-'a') + 10
		default:
			tb.Fatalf("bad hex %q", s)
		}
		if hi < 0 {
			hi = v
		} else {
			b = append(b, byte(hi<<4|v))
			hi = -1
		}
	}
	if hi >= 0 {
		tb.Fatalf("odd hex %q", s)
	}
	return b
}

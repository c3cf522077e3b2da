package rakwire

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestRangeListRoundTrip(t *testing.T) {
	lists := [][]Range{
		{},
		{{0, 0}},
		{{0xffffff, 0xffffff}},
		{{0, 0xffffff}},
		{{1, 2}, {4, 4}, {6, 0xfffffe}},
	}
	for _, rs := range lists {
		b, err := appendRangeList(nil, rs)
		if err != nil || len(b) != rangeListLen(rs) {
			t.Fatalf("%v: wrote %d bytes, Len %d, %v", rs, len(b), rangeListLen(rs), err)
		}
		got, used, err := parseRangeList(b, nil)
		if err != nil || used != len(b) {
			t.Fatalf("%v: parseRangeList = %d, %v", rs, used, err)
		}
		if diff := cmp.Diff(rs, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
	}
	// The original library's encoding of {single 1} and {range 3..5}.
	b, _ := appendRangeList(nil, []Range{{1, 1}, {3, 5}})
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
		if _, _, err := parseRangeList(tt.b, nil); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// A range that names every datagram number parses in constant time.
	rs, _, err := parseRangeList(fromHex(t, "0001 00 000000 ffffff"), nil)
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
		b := mustAppend(t, nil, &a)
		if len(b) != a.Len() {
			t.Fatalf("%+v: %d bytes, Len %d", a, len(b), a.Len())
		}
		var got Ack
		if n, err := ParseAck(append(b, 0xee), &got); err != nil || n != len(b) {
			t.Fatalf("%+v: ParseAck = %d, %v; want %d (the byte after the list is not used)", a, n, err, len(b))
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
		if got := mustAppend(t, nil, &tt.a); !bytes.Equal(got, tt.want) {
			t.Errorf("%+v: %x, want %x", tt.a, got, tt.want)
		}
	}
	// ParseAck reuses the caller's storage.
	a := Ack{Ranges: make([]Range, 0, 4)}
	p := &a.Ranges[:1][0]
	if _, err := ParseAck(fromHex(t, "a0 0001 01 050000"), &a); err != nil || &a.Ranges[0] != p {
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
		if n, err := ParseAck(tt.b, &a); !errors.Is(err, tt.want) || n != 0 {
			t.Errorf("ParseAck(%x) = %d, %v; want 0, %v", tt.b, n, err, tt.want)
		}
	}
}

func TestAckAppendErrors(t *testing.T) {
	for _, tt := range []struct {
		a    Ack
		want error
	}{
		{Ack{Ranges: []Range{{1, 1}, {5, 4}}}, ErrRangeInverted},
		{Ack{NAK: true, Ranges: []Range{{1, 1 << 24}}}, ErrU24},
		{Ack{HasAS: true, Ranges: []Range{{1 << 24, 1 << 24}}}, ErrU24},
		{Ack{Ranges: make([]Range, maxRangeRecords+1)}, ErrRangeCount},
	} {
		if b, err := tt.a.Append([]byte{0xee}); !errors.Is(err, tt.want) || !bytes.Equal(b, []byte{0xee}) {
			t.Errorf("%+v: Append = %x, %v; want the input and %v", tt.a.Ranges[:min(2, len(tt.a.Ranges))], b, err, tt.want)
		}
	}
	if b, err := (&Ack{Ranges: make([]Range, maxRangeRecords)}).Append(nil); err != nil || len(b) != 1+2+4*maxRangeRecords {
		t.Errorf("65535 ranges: %d bytes, %v", len(b), err)
	}
}

func TestAckFit(t *testing.T) {
	// Every second number: each needs a 4-byte record.
	var rs []Range
	for i := uint32(0); i < 1000; i++ {
		rs = append(rs, Range{2 * i, 2 * i})
	}
	const mtu = benchDatagramLen
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

	if got := AckFit(false, true, []Range{{1, 1}, {3, 3}}, 1+4+2+4); got != 1 {
		t.Errorf("AckFit with AS = %d, want 1", got)
	}
	if got := rangesThatFit(make([]Range, 70000), 1<<20); got != maxRangeRecords {
		t.Errorf("rangesThatFit caps at %d, want %d", got, maxRangeRecords)
	}
}

// benchManyRanges is an ACK of every second datagram number, as many
// ranges as fit in one datagram.
func benchManyRanges() Ack {
	var rs []Range
	for i := uint32(0); ; i++ {
		rs = append(rs, Range{Min: 4 * i, Max: 4*i + 1})
		if (&Ack{Ranges: rs}).Len() > benchDatagramLen {
			return Ack{Ranges: rs[:len(rs)-1]}
		}
	}
}

func BenchmarkEncodeAckManyRanges(b *testing.B) {
	a := benchManyRanges()
	buf := make([]byte, 0, benchDatagramLen)
	b.SetBytes(int64(a.Len()))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = a.Append(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(a.Ranges)), "ranges")
}

func BenchmarkDecodeAckManyRanges(b *testing.B) {
	a := benchManyRanges()
	dgram := mustAppend(b, nil, &a)
	b.SetBytes(int64(len(dgram)))
	b.ReportAllocs()
	got := Ack{Ranges: make([]Range, 0, len(a.Ranges))}
	for b.Loop() {
		if _, err := ParseAck(dgram, &got); err != nil || len(got.Ranges) != len(a.Ranges) {
			b.Fatal(err)
		}
	}
}

package rakwire

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/netrak/netrak/internal/rakcapture"
)

// Fuzz targets for every parser, seeded from the original library's
// capture. Run one with, for example:
//
//	go test -run XXX -fuzz FuzzDatagram -fuzztime 15s ./internal/rakwire

func FuzzDatagram(f *testing.F) {
	for _, d := range rakcapture.Load(f) {
		f.Add(d.Data)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		switch ClassifyDatagram(b) {
		case DatagramData:
			checkDataDatagram(t, b)
		case DatagramACK, DatagramNAK:
			checkAck(t, b)
		}
	})
}

func checkDataDatagram(t *testing.T, b []byte) {
	var h DataHeader
	n, err := ParseDataHeader(b, &h)
	if err != nil {
		return
	}
	var got DataHeader
	if _, err := ParseDataHeader(mustAppend(t, nil, &h), &got); err != nil || got != h {
		t.Fatalf("header round trip: %+v -> %+v, %v", h, got, err)
	}
	r := NewFrameReader(b[n:])
	var f Frame
	for i := 0; ; i++ {
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			if r.Skippable(err) {
				continue
			}
			if r.Next(&f) != io.EOF {
				t.Fatal("reader continued after a fatal error")
			}
			break
		}
		if i > len(b) {
			t.Fatal("more frames than bytes")
		}
		checkFrameRoundTrip(t, &f)
	}
}

func checkFrameRoundTrip(t *testing.T, f *Frame) {
	enc := mustAppend(t, nil, f)
	if len(enc) != f.Len() {
		t.Fatalf("Append wrote %d bytes, Len %d", len(enc), f.Len())
	}
	var got Frame
	n, err := ParseFrame(enc, &got)
	if err != nil || n != len(enc) {
		t.Fatalf("re-parse: %d, %v", n, err)
	}
	want := *f
	want.Reliability = f.Reliability.WireKind()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("frame round trip (-want +got):\n%s", diff)
	}
}

func checkAck(t *testing.T, b []byte) {
	var a Ack
	used, err := ParseAck(b, &a)
	if err != nil {
		return
	}
	if len(a.Ranges) > len(b)/minRecordLen {
		t.Fatalf("%d ranges from %d bytes", len(a.Ranges), len(b))
	}
	for _, r := range a.Ranges {
		if r.Min > r.Max || r.Max > maxU24 {
			t.Fatalf("bad range %+v", r)
		}
	}
	enc := mustAppend(t, nil, &a)
	if len(enc) != a.Len() || len(enc) > used {
		t.Fatalf("re-encoded %d bytes, Len %d, input %d", len(enc), a.Len(), used)
	}
	var got Ack
	if n, err := ParseAck(enc, &got); err != nil || n != len(enc) {
		t.Fatal(n, err)
	}
	if math.Float32bits(got.AS) != math.Float32bits(a.AS) {
		t.Fatalf("AS %v -> %v", a.AS, got.AS)
	}
	got.AS, a.AS = 0, 0
	if diff := cmp.Diff(a, got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("ack round trip (-want +got):\n%s", diff)
	}
}

func FuzzRangeList(f *testing.F) {
	for _, d := range rakcapture.Load(f) {
		if ClassifyDatagram(d.Data) == DatagramACK || ClassifyDatagram(d.Data) == DatagramNAK {
			f.Add(d.Data[1:])
		}
	}
	f.Add(fromHex(f, "0001 00 000000 ffffff"))
	f.Add(fromHex(f, "ffff 01 000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, n, err := parseRangeList(b, nil)
		if err != nil {
			return
		}
		if n > len(b) || len(rs) > (len(b)-2)/minRecordLen {
			t.Fatalf("used %d of %d bytes for %d ranges", n, len(b), len(rs))
		}
		enc, err := appendRangeList(nil, rs)
		if err != nil || len(enc) != rangeListLen(rs) {
			t.Fatalf("%d ranges re-encoded in %d bytes, Len %d: %v", len(rs), len(enc), rangeListLen(rs), err)
		}
		// The encoding is canonical apart from the single/range flag: a
		// range record with min == max re-encodes as a single, and any
		// non-zero flag byte reads as single.
		got, m, err := parseRangeList(enc, nil)
		if err != nil || m != len(enc) {
			t.Fatalf("re-parse: %d, %v", m, err)
		}
		if diff := cmp.Diff(rs, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("range list round trip (-want +got):\n%s", diff)
		}
		if m == n && !bytes.Equal(enc, b[:n]) {
			canonicalFlags := true
			for p := 2; p < n; {
				if b[p] > 1 {
					canonicalFlags = false
				}
				if b[p] == 0 {
					p += 7
				} else {
					p += 4
				}
			}
			if canonicalFlags {
				t.Fatalf("same length, different bytes:\n%x\n%x", enc, b[:n])
			}
		}
	})
}

func FuzzFrame(f *testing.F) {
	for _, d := range rakcapture.Load(f) {
		if ClassifyDatagram(d.Data) == DatagramData {
			f.Add(d.Data[DataHeaderLen:])
		}
	}
	for _, fr := range limitFrames() {
		if len(fr.Payload) < 16 {
			f.Add(mustAppend(f, nil, &fr))
		}
	}
	f.Add(append([]byte{0, 0xff, 0xff}, make([]byte, 8192)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr Frame
		n, err := ParseFrame(b, &fr)
		if err != nil {
			if errors.Is(err, ErrFrameChannel) || errors.Is(err, ErrFrameSplit) {
				if n <= 0 || n > len(b) {
					t.Fatalf("skippable error with n = %d of %d", n, len(b))
				}
			} else if n != 0 {
				t.Fatalf("fatal error with n = %d", n)
			}
			return
		}
		if n > len(b) || n != fr.Len() {
			t.Fatalf("used %d of %d bytes, Len %d", n, len(b), fr.Len())
		}
		checkFrameRoundTrip(t, &fr)
		// Byte-identical when the input was canonical: a stored kind, no
		// stray low flag bits, and a whole number of bytes.
		bits := int(b[1])<<8 | int(b[2])
		if b[0]&0x0f == 0 && fr.Reliability == fr.Reliability.WireKind() && bits%8 == 0 {
			if enc := mustAppend(t, nil, &fr); !bytes.Equal(enc, b[:n]) {
				t.Fatalf("canonical frame re-encoded differently:\n%x\n%x", enc, b[:n])
			}
		}
	})
}

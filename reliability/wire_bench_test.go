package reliability

import (
	"io"
	"testing"
)

// Wire benchmarks: run with
//
//	go test -run XXX -bench 'Encode|Decode' -benchmem ./reliability

const benchDatagramLen = MaxMTU - UDPIPOverhead

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
	b.SetBytes(int64(len(encodeFrames(h, frames, nil))))
	b.ReportAllocs()
	for b.Loop() {
		buf = encodeFrames(h, frames, buf[:0])
	}
	b.ReportMetric(float64(len(frames)), "frames/datagram")
}

func encodeFrames(h DataHeader, frames []Frame, buf []byte) []byte {
	buf = h.Append(buf)
	for i := range frames {
		buf = frames[i].Append(buf)
	}
	return buf
}

func BenchmarkDecodeDatagramSmallFrames(b *testing.B) {
	h, frames := benchSmallFrames()
	dgram := encodeFrames(h, frames, nil)
	b.SetBytes(int64(len(dgram)))
	b.ReportAllocs()
	var f Frame
	for b.Loop() {
		_, r, err := ParseDataDatagram(dgram)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for r.Next(&f) != io.EOF {
			n++
		}
		if n != len(frames) {
			b.Fatalf("%d frames", n)
		}
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
		buf = a.Append(buf[:0])
	}
	b.ReportMetric(float64(len(a.Ranges)), "ranges")
}

func BenchmarkDecodeAckManyRanges(b *testing.B) {
	a := benchManyRanges()
	dgram := a.Append(nil)
	b.SetBytes(int64(len(dgram)))
	b.ReportAllocs()
	got := Ack{Ranges: make([]Range, 0, len(a.Ranges))}
	for b.Loop() {
		if err := ParseAck(dgram, &got); err != nil || len(got.Ranges) != len(a.Ranges) {
			b.Fatal(err)
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
	b.SetBytes(int64(DataHeaderLen + f.Len()))
	b.ReportAllocs()
	for b.Loop() {
		buf = f.Append(h.Append(buf[:0]))
	}
}

func BenchmarkDecodeSplitFrame(b *testing.B) {
	h, f := benchSplitFrame()
	dgram := f.Append(h.Append(nil))
	b.SetBytes(int64(len(dgram)))
	b.ReportAllocs()
	var got Frame
	for b.Loop() {
		_, r, err := ParseDataDatagram(dgram)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Next(&got); err != nil || !got.Split {
			b.Fatal(err)
		}
	}
}
